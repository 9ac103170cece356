// chainrt runtime: the shared-memory segment of an accelerator used by several processes
// (accelerator_shm.hpp), and SharedAccelerator's server and client loops over it.
#include "chainrt/runtime/accelerator_shm.hpp"

#include <fcntl.h>
#include <linux/futex.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <limits>
#include <stdexcept>
#include <vector>

#include "chainrt/runtime/accelerator.hpp"
#include "chainrt/runtime/threads.hpp"

namespace chainrt::runtime {

namespace {

constexpr std::uint64_t kMagic = 0x63727461636331ULL;  // "crtacc1"
constexpr std::uint32_t kVersion = 1;

std::size_t segment_bytes(std::size_t capacity) {
  const std::size_t head = (sizeof(shm::Header) + 63) / 64 * 64;
  return head + capacity * sizeof(shm::Slot);
}

[[noreturn]] void fail(const std::string& name, const std::string& what) {
  throw std::runtime_error("accelerator segment " + name + ": " + what + ": " + std::strerror(errno));
}

// The descriptor still names the file `name` (nobody unlinked it since it was opened).
bool still_named(int fd, const std::string& name) {
  struct stat a{}, b{};
  if (fstat(fd, &a) != 0) return false;
  const std::string path = "/dev/shm" + name;
  if (stat(path.c_str(), &b) != 0) return false;
  return a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

void init_header(shm::Header& h, std::size_t capacity, AcceleratorAccess access) {
  std::memset(static_cast<void*>(&h), 0, sizeof h);
  h.version = kVersion;
  h.capacity = static_cast<std::uint32_t>(capacity);
  h.access = static_cast<std::uint32_t>(access);
  pthread_mutexattr_t a;
  pthread_mutexattr_init(&a);
  pthread_mutexattr_setpshared(&a, PTHREAD_PROCESS_SHARED);
  pthread_mutexattr_setrobust(&a, PTHREAD_MUTEX_ROBUST);
  pthread_mutex_init(&h.m, &a);
  pthread_mutexattr_destroy(&a);
}

}  // namespace

bool process_alive(pid_t pid) noexcept { return pid > 0 && (kill(pid, 0) == 0 || errno == EPERM); }

void futex_wait(std::atomic<std::uint32_t>& word, std::uint32_t expected, std::int64_t timeout_ns) noexcept {
  timespec ts{static_cast<time_t>(timeout_ns / 1'000'000'000), static_cast<long>(timeout_ns % 1'000'000'000)};
  syscall(SYS_futex, reinterpret_cast<std::uint32_t*>(&word), FUTEX_WAIT, expected, &ts, nullptr, 0);
}

void futex_wake_all(std::atomic<std::uint32_t>& word) noexcept {
  syscall(SYS_futex, reinterpret_cast<std::uint32_t*>(&word), FUTEX_WAKE, std::numeric_limits<int>::max(), nullptr,
          nullptr, 0);
}

std::string AcceleratorShm::segment_name(std::string_view accelerator) {
  std::string n = "/chainrt-acc-";
  for (char c : accelerator)
    n += (std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == '-') ? c : '_';
  return n.substr(0, 250);
}

AcceleratorShm::AcceleratorShm(std::string name, std::size_t capacity, AcceleratorAccess access)
    : name_(std::move(name)) {
  static_assert(std::atomic<std::uint32_t>::is_always_lock_free);
  if (capacity < 1 || capacity > (1u << 20)) throw std::invalid_argument("accelerator segment " + name_ + ": capacity 1..2^20");
  const std::size_t want = segment_bytes(capacity);
  for (;;) {
    fd_ = shm_open(name_.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
    if (fd_ < 0) fail(name_, "shm_open");
    bool alone = flock(fd_, LOCK_EX | LOCK_NB) == 0;
    if (!alone && flock(fd_, LOCK_SH) != 0) fail(name_, "flock");
    if (!still_named(fd_, name_)) {  // unlinked by its last user meanwhile: open the new one
      close(fd_);
      continue;
    }
    if (alone) {
      // Nobody else holds it: a fresh file or one left by processes that were all killed.
      if (ftruncate(fd_, 0) != 0 || ftruncate(fd_, static_cast<off_t>(want)) != 0) fail(name_, "ftruncate");
    } else {
      struct stat st{};
      if (fstat(fd_, &st) != 0) fail(name_, "fstat");
      if (static_cast<std::size_t>(st.st_size) != want) {
        close(fd_);
        throw std::runtime_error("accelerator segment " + name_ + " is in use with another capacity");
      }
    }
    bytes_ = want;
    void* p = mmap(nullptr, bytes_, PROT_READ | PROT_WRITE, MAP_SHARED, fd_, 0);
    if (p == MAP_FAILED) fail(name_, "mmap");
    header_ = static_cast<shm::Header*>(p);
    slots_ = reinterpret_cast<shm::Slot*>(static_cast<char*>(p) + (sizeof(shm::Header) + 63) / 64 * 64);
    if (alone) {
      init_header(*header_, capacity, access);
      std::atomic_ref<std::uint64_t>(header_->magic).store(kMagic, std::memory_order_release);
      // Downgrade: another attacher may take the exclusive lock in between (flock's conversion is
      // not atomic) and initialize again — harmless, nothing is queued before this returns.
      if (flock(fd_, LOCK_SH) != 0) fail(name_, "flock");
      if (!still_named(fd_, name_)) {
        munmap(p, bytes_);
        close(fd_);
        continue;
      }
    }
    break;
  }
  if (header_->magic != kMagic || header_->version != kVersion || header_->capacity != capacity) {
    munmap(header_, bytes_);
    close(fd_);
    throw std::runtime_error("accelerator segment " + name_ + " is in use by another version or capacity");
  }
  if (header_->access != static_cast<std::uint32_t>(access)) {
    munmap(header_, bytes_);
    close(fd_);
    throw std::runtime_error("accelerator segment " + name_ + " is in use with another access mode");
  }
  lock();
  bool listed = false;
  for (auto& pid : header_->pids)
    if (pid == 0 || !process_alive(pid)) {
      pid = getpid();
      listed = true;
      break;
    }
  unlock();
  if (!listed) {
    munmap(header_, bytes_);
    close(fd_);
    throw std::runtime_error("accelerator segment " + name_ + ": more than " + std::to_string(shm::kMaxProcesses) +
                             " processes attached");
  }
}

AcceleratorShm::~AcceleratorShm() {
  lock();
  for (auto& pid : header_->pids)
    if (pid == getpid()) pid = 0;
  unlock();
  munmap(header_, bytes_);
  // the last one out (nobody else holds the shared lock) removes the name
  if (flock(fd_, LOCK_EX | LOCK_NB) == 0 && still_named(fd_, name_)) shm_unlink(name_.c_str());
  close(fd_);
}

void AcceleratorShm::lock() noexcept {
  if (pthread_mutex_lock(&header_->m) == EOWNERDEAD) {
    // its owner died while holding it: every slot is consistent (fields before state)
    pthread_mutex_consistent(&header_->m);
    ++recoveries_;
  }
}

void AcceleratorShm::unlock() noexcept { pthread_mutex_unlock(&header_->m); }

// ---- SharedAccelerator over the segment ----

namespace {
constexpr std::int64_t kPollNs = 50'000'000;  // how often waits look for dead processes
}

long SharedAccelerator::shm_enqueue(const Request& r) noexcept {
  std::lock_guard<std::mutex> lk(m_);  // local_ and this process's counters
  if (stop_ || server_gone_) return -1;
  shm::Header& h = seg_->header();
  const std::int32_t me = getpid();
  seg_->lock();
  long slot = -1;
  for (std::size_t i = 0; i < seg_->capacity(); ++i)
    if (seg_->slot(i).state.load(std::memory_order_relaxed) == shm::Free) {
      slot = static_cast<long>(i);
      break;
    }
  if (slot >= 0) {
    shm::Slot& s = seg_->slot(static_cast<std::size_t>(slot));
    s.pid = me;
    s.has_job = r.work.job != nullptr;
    s.site = r.site;
    s.segment = r.segment;
    s.key = r.key;
    s.seq = h.seq++;
    s.copy_in = r.work.copy_in;
    s.kernel = r.work.kernel;
    s.copy_out = r.work.copy_out;
    s.issued = now();
    s.start = s.finish = 0;
    local_[static_cast<std::size_t>(slot)] = r;
    abandoned_[static_cast<std::size_t>(slot)] = false;
    s.state.store(shm::Queued, std::memory_order_release);  // last: the slot is whole
    ++outstanding_;
    ++seq_;
  }
  seg_->unlock();
  if (slot >= 0) {
    h.work.fetch_add(1, std::memory_order_release);
    futex_wake_all(h.work);
  }
  return slot;
}

void SharedAccelerator::shm_abandon(long slot) noexcept {
  std::lock_guard<std::mutex> lk(m_);
  const auto i = static_cast<std::size_t>(slot);
  seg_->lock();
  shm::Slot& s = seg_->slot(i);
  if (s.pid == getpid() && s.state.load(std::memory_order_relaxed) == shm::Queued) {
    s.state.store(shm::Free, std::memory_order_release);  // never served: it is gone
    --outstanding_;
  } else {
    abandoned_[i] = true;  // the completion thread frees it if it ever completes
  }
  ++lost_;
  seg_->unlock();
}

// The server thread of a shared accelerator: the in-process loop's rule over the segment's
// slots, every process's requests; a dead client's queued and finished requests are freed.
void SharedAccelerator::shm_serve() {
  const bool server = o_.access == AcceleratorAccess::Server;
  shm::Header& h = seg_->header();
  const std::int32_t me = getpid();
  seg_->lock();
  h.server_pid = me;
  for (std::size_t i = 0; i < seg_->capacity(); ++i) {  // what a server that died left in service
    const std::uint32_t st = seg_->slot(i).state.load(std::memory_order_relaxed);
    if (st == shm::Serving || st == shm::Granted || st == shm::JobDone)
      seg_->slot(i).state.store(shm::Queued, std::memory_order_release);
  }
  seg_->unlock();
  Duration grace_end = -1;
  for (;;) {
    const std::uint32_t w = h.work.load(std::memory_order_acquire);
    bool stopping = false;
    {
      std::lock_guard<std::mutex> lk(m_);
      stopping = stop_;
    }
    if (stopping && grace_end < 0) grace_end = now_ns() + o_.stop_grace;
    seg_->lock();
    long best = -1;
    bool others = false;
    for (std::size_t i = 0; i < seg_->capacity(); ++i) {
      shm::Slot& s = seg_->slot(i);
      const std::uint32_t st = s.state.load(std::memory_order_relaxed);
      if (st == shm::Free) continue;
      const bool mine = s.pid == me;
      if ((st == shm::Queued || st == shm::Done) && (mine ? stopping : !process_alive(s.pid))) {
        s.state.store(shm::Free, std::memory_order_release);  // nobody will take its completion
        continue;
      }
      if (st != shm::Queued) continue;
      const shm::Slot* b = best < 0 ? nullptr : &seg_->slot(static_cast<std::size_t>(best));
      if (!b || served_before(server, s.key, s.seq, b->key, b->seq)) best = static_cast<long>(i);
    }
    for (std::int32_t pid : h.pids) others = others || (pid != 0 && pid != me && process_alive(pid));
    if (best < 0) {
      seg_->unlock();
      if (stopping && (!others || now_ns() >= grace_end)) break;
      futex_wait(h.work, w, kPollNs);
      continue;
    }
    shm::Slot& s = seg_->slot(static_cast<std::size_t>(best));
    s.state.store(shm::Serving, std::memory_order_release);
    Request r;
    r.site = s.site;
    r.segment = s.segment;
    r.issued = s.issued;
    r.work = DeviceWork{s.copy_in, s.kernel, s.copy_out};
    const bool job = s.has_job != 0;
    const std::int32_t client = s.pid;
    seg_->unlock();
    {
      std::lock_guard<std::mutex> lk(m_);
      busy_ = true;
    }
    Duration start = 0, finish = 0;
    serve_one(r, start, finish);
    if (job) {
      // the client's own device code runs in its process while the device is held for it
      seg_->lock();
      s.state.store(shm::Granted, std::memory_order_release);
      seg_->unlock();
      h.completions.fetch_add(1, std::memory_order_release);
      futex_wake_all(h.completions);
      // (until the job is done, or its process died or detached: then nobody will run it)
      auto attached = [&] {
        seg_->lock();
        const bool in = std::find(std::begin(h.pids), std::end(h.pids), client) != std::end(h.pids);
        seg_->unlock();
        return in && process_alive(client);
      };
      while (s.state.load(std::memory_order_acquire) == shm::Granted && attached())
        futex_wait(s.state, shm::Granted, kPollNs);
      finish = now();
    }
    seg_->lock();
    s.start = start;
    s.finish = finish;
    s.done_order = h.done_order++;
    s.state.store(shm::Done, std::memory_order_release);
    seg_->unlock();
    h.completions.fetch_add(1, std::memory_order_release);
    futex_wake_all(h.completions);
    std::lock_guard<std::mutex> lk(m_);
    record(DeviceRecord{r.site, r.segment, r.issued, start, finish});
    busy_ = false;
    done_cv_.notify_all();
  }
  seg_->lock();
  h.server_pid = 0;
  seg_->unlock();
  h.completions.fetch_add(1, std::memory_order_release);
  futex_wake_all(h.completions);
}

// This process's completion thread: its finished requests in completion order (a blocked
// caller woken, or the completion hook run, as the in-process server does on its thread), its
// granted jobs, and whether its server went away (its blocked callers then fail).
void SharedAccelerator::shm_complete() {
  shm::Header& h = seg_->header();
  const std::int32_t me = getpid();
  std::vector<std::pair<std::uint64_t, std::size_t>> done;
  std::vector<std::size_t> granted;
  done.reserve(seg_->capacity());
  granted.reserve(seg_->capacity());
  bool seen_server = false;
  for (;;) {
    const std::uint32_t c = h.completions.load(std::memory_order_acquire);
    done.clear();
    granted.clear();
    seg_->lock();
    for (std::size_t i = 0; i < seg_->capacity(); ++i) {
      shm::Slot& s = seg_->slot(i);
      if (s.pid != me) continue;
      const std::uint32_t st = s.state.load(std::memory_order_relaxed);
      if (st == shm::Done) done.emplace_back(s.done_order, i);
      else if (st == shm::Granted) granted.push_back(i);
    }
    const std::int32_t server = h.server_pid;
    seg_->unlock();
    for (std::size_t i : granted) {
      const Request& r = local_[i];  // written before the slot was queued; stable until freed
      if (r.work.job) r.work.job(r.work.job_context);
      seg_->slot(i).state.store(shm::JobDone, std::memory_order_release);
      futex_wake_all(seg_->slot(i).state);
    }
    std::sort(done.begin(), done.end());
    for (const auto& [order, i] : done) {
      std::unique_lock<std::mutex> lk(m_);
      const Request r = local_[i];
      const bool gone = abandoned_[i] || stop_;  // a stopped caller's frame is gone
      seg_->lock();
      seg_->slot(i).state.store(shm::Free, std::memory_order_release);
      seg_->unlock();
      --outstanding_;
      if (!gone && r.finished) *r.finished = true;
      lk.unlock();
      if (!gone && r.done) r.done(r.context, r.token);
      done_cv_.notify_all();
    }
    seen_server = seen_server || server != 0;
    const bool gone = seen_server && (server == 0 || !process_alive(server));
    if (gone != server_gone_.load()) {
      std::lock_guard<std::mutex> lk(m_);
      server_gone_ = gone;
      done_cv_.notify_all();
    }
    if (client_stop_) return;
    futex_wait(h.completions, c, kPollNs);
  }
}

}  // namespace chainrt::runtime
