// chainrt runtime: one accelerator shared by several processes (the standalone accelerator
// server of PAAM — Enright, Xiang, Choi, Kim, RTAS 2024 — on chainrt's chain-priority server,
// accelerator.hpp). The request queue lives in a POSIX shared-memory segment that every process
// using the accelerator maps; one of them runs the server thread (AcceleratorOptions::serve),
// the others are clients. A request is a slot of the segment: its priority, site, segment and
// device parts are written in place by the client (nothing else is copied); a request with a
// job (the client's own device code) is granted the device in turn and the client's process
// runs the job while the server holds the device for it, so the job's data never leaves its
// process.
//
// The segment's lifecycle (no file left in /dev/shm once every user is gone):
//  - every attached process holds a shared flock() on the segment;
//  - the one that can take it exclusively is alone: it (re)initializes the segment — a segment
//    left by processes that were all killed is reset by the next start — and the one that can
//    take it exclusively when detaching is the last one out and unlinks the name;
//  - after each lock the descriptor is checked to still be the named file (another process may
//    have unlinked it meanwhile), else the attach starts over.
// If every user of a segment is killed (kill -9), the file stays until the next start with the
// same name or until a user removes it (`chainrt` runs remove it when a run's processes end).
//
// Owner death: the segment's mutex is a robust process-shared mutex; a process that dies
// holding it leaves every slot in a consistent state (a slot's fields are written before its
// state), so the next locker marks it consistent and goes on. A dead client's queued requests
// are dropped by the server, its granted one is taken back, its finished ones freed. A server
// that dies or stops while requests wait releases its clients' waiters (their requests fail).
#pragma once

#include <pthread.h>
#include <sys/types.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "chainrt/model/model.hpp"

namespace chainrt::runtime {

// The order in which an accelerator serves its queued requests, the one rule of the in-process
// and the shared-memory queue (and of the simulator's flush_devices): direct access first come,
// first served (`seq`); server access the smallest key (-priority; no priority: last), then
// the oldest.
inline bool served_before(bool server, std::int64_t key_a, std::uint64_t seq_a, std::int64_t key_b,
                          std::uint64_t seq_b) noexcept {
  return server ? (key_a < key_b || (key_a == key_b && seq_a < seq_b)) : seq_a < seq_b;
}

namespace shm {

enum SlotState : std::uint32_t { Free = 0, Queued, Serving, Granted, JobDone, Done };

// One request in the segment. Written by its client under the segment's mutex, fields before
// `state`; `state` is also a futex word (Granted -> JobDone wakes the server).
struct Slot {
  std::atomic<std::uint32_t> state;
  std::int32_t pid;  // the requesting process
  std::uint32_t has_job;
  std::uint32_t site, segment;
  std::int64_t key;
  std::uint64_t seq;
  std::int64_t copy_in, kernel, copy_out;
  std::int64_t issued, start, finish;
  std::uint64_t done_order;  // completion order (the client runs its hooks in it)
};

constexpr std::size_t kMaxProcesses = 64;

struct Header {
  std::uint64_t magic;
  std::uint32_t version, capacity;
  std::uint32_t access;  // AcceleratorAccess: every user must agree
  pthread_mutex_t m;     // robust, process-shared
  std::atomic<std::uint32_t> work;         // futex: bumped per queued request (the server waits)
  std::atomic<std::uint32_t> completions;  // futex: bumped per request done or granted (clients wait)
  std::int32_t server_pid;                 // 0: no server now
  std::uint64_t seq, done_order;
  std::int32_t pids[kMaxProcesses];        // attached processes (0: free entry)
};

}  // namespace shm

// One process's attachment to the segment of one shared accelerator. Not thread-safe itself:
// SharedAccelerator serializes what it does with it (the segment's mutex across processes).
class AcceleratorShm {
 public:
  // "/chainrt-acc-<name>" with every character but [A-Za-z0-9._-] as '_' (a valid shm_open name).
  static std::string segment_name(std::string_view accelerator);

  // Attaches to (creates, or resets when it is alone) the segment `name` of `capacity` slots.
  // Throws std::runtime_error when it cannot, when the process table is full, or when a
  // current user made it with another capacity or access mode.
  AcceleratorShm(std::string name, std::size_t capacity, AcceleratorAccess access);
  ~AcceleratorShm();  // detaches; the last one out unlinks the name
  AcceleratorShm(const AcceleratorShm&) = delete;
  AcceleratorShm& operator=(const AcceleratorShm&) = delete;

  const std::string& name() const noexcept { return name_; }
  std::size_t capacity() const noexcept { return header_->capacity; }
  shm::Header& header() noexcept { return *header_; }
  shm::Slot& slot(std::size_t i) noexcept { return slots_[i]; }

  // The segment's robust mutex; lock() recovers it from a dead owner (and counts that).
  void lock() noexcept;
  void unlock() noexcept;
  std::uint64_t recoveries() const noexcept { return recoveries_; }

 private:
  std::string name_;
  int fd_ = -1;
  std::size_t bytes_ = 0;
  shm::Header* header_ = nullptr;
  shm::Slot* slots_ = nullptr;
  std::uint64_t recoveries_ = 0;
};

// Whether process `pid` is alive (kill(pid, 0)); a reused pid reads as alive.
bool process_alive(pid_t pid) noexcept;
// FUTEX_WAIT (shared) on `word` while it holds `expected`, for at most `timeout_ns`.
void futex_wait(std::atomic<std::uint32_t>& word, std::uint32_t expected, std::int64_t timeout_ns) noexcept;
// FUTEX_WAKE (shared) of every waiter on `word`.
void futex_wake_all(std::atomic<std::uint32_t>& word) noexcept;

}  // namespace chainrt::runtime
