// One accelerator for several processes (runtime/accelerator_shm.hpp): a server and client
// processes on the emulated device, the order of service across processes (the server's trace),
// processes killed with SIGKILL (a client holding the segment's mutex, a client with a queued
// request, the server, every user), and nothing left in /dev/shm afterwards. Every child is
// forked before the parent starts a thread, and waits for its go byte on a pipe.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "chainrt/runtime/accelerator.hpp"
#include "chainrt/runtime/accelerator_shm.hpp"

namespace chainrt::runtime {
namespace {

std::string segment(const std::string& tag) {
  return AcceleratorShm::segment_name("test-" + tag + "-" + std::to_string(getpid()));
}

bool in_dev_shm(const std::string& name) { return access(("/dev/shm" + name).c_str(), F_OK) == 0; }

AcceleratorOptions options(const std::string& shm, bool serve) {
  AcceleratorOptions o;
  o.name = "gpu";
  o.access = AcceleratorAccess::Server;
  o.shared_memory = shm;
  o.serve = serve;
  o.capacity = 16;
  o.trace_capacity = 16;
  o.stop_grace = 0;
  return o;
}

// A hang guard, not a timing figure: a broken queue deadlocks, and the test then fails here.
void wait_until(const std::function<bool()>& ok, const char* what) {
  for (int i = 0; i < 60'000 && !ok(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  ASSERT_TRUE(ok()) << "still waiting after 60 s: " << what;
}

// A child process that runs `body` once the parent writes its go byte.
struct Child {
  pid_t pid = -1;
  int go = -1;
  void start() const {
    const char b = 1;
    ASSERT_EQ(write(go, &b, 1), 1);
  }
  int wait_status() const {
    int st = 0;
    waitpid(pid, &st, 0);
    return st;
  }
};

Child fork_child(const std::function<int()>& body) {
  int p[2];
  if (pipe(p) != 0) std::abort();
  const pid_t pid = fork();
  if (pid == 0) {
    close(p[1]);
    char b = 0;
    if (read(p[0], &b, 1) != 1) _exit(3);  // the parent ended without starting it
    _exit(body());
  }
  close(p[0]);
  return Child{pid, p[1]};
}

// A client: one request at `priority` as `site` (1 ms of kernel), blocking until it is done.
int client(const std::string& shm, std::uint32_t site, int priority) {
  SharedAccelerator acc(options(shm, false), std::make_unique<EmulatedDevice>());
  const bool ran = acc.call(site, 0, DeviceWork{0, 1'000'000, 0}, priority);
  acc.stop();
  return ran ? 0 : 1;
}

bool exited_ok(int st) { return WIFEXITED(st) && WEXITSTATUS(st) == 0; }
bool killed(int st) { return WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL; }

TEST(AcceleratorSharedMemory, ServesClientProcessesByChainPriorityAndSurvivesKilledClients) {
  const std::string shm = segment("order");
  // L asks first (priority 1) and holds the device until A, B, C (5, 9, 7) wait; V dies holding
  // the segment's mutex; K (10, the most urgent) is killed while its request is queued.
  Child L = fork_child([&] { return client(shm, 1, 1); });
  Child A = fork_child([&] { return client(shm, 2, 5); });
  Child B = fork_child([&] { return client(shm, 3, 9); });
  Child C = fork_child([&] { return client(shm, 4, 7); });
  Child K = fork_child([&] { return client(shm, 6, 10); });
  Child V = fork_child([&] {
    AcceleratorShm s(shm, 16, AcceleratorAccess::Server);
    s.lock();
    raise(SIGKILL);
    return 4;
  });

  std::mutex m;
  std::condition_variable cv;
  bool gate = false, first = true, holding = false;
  auto device = std::make_unique<EmulatedDevice>([&](Duration) {
    std::unique_lock<std::mutex> lk(m);
    if (!first) return;
    first = false;
    holding = true;
    cv.wait(lk, [&] { return gate; });
  });
  SharedAccelerator server(options(shm, true), std::move(device));

  L.start();
  wait_until([&] { std::lock_guard<std::mutex> lk(m); return holding; }, "L's request on the device");
  V.start();
  EXPECT_TRUE(killed(V.wait_status()));
  K.start();
  wait_until([&] { return server.queued() == 1; }, "K's request queued after V died holding the mutex");
  kill(K.pid, SIGKILL);
  EXPECT_TRUE(killed(K.wait_status()));
  A.start();
  B.start();
  C.start();
  wait_until([&] { return server.queued() == 4; }, "A, B and C queued beside K's");
  {
    std::lock_guard<std::mutex> lk(m);
    gate = true;
  }
  cv.notify_all();
  for (const Child* c : {&L, &A, &B, &C}) EXPECT_TRUE(exited_ok(c->wait_status())) << "client " << c->pid;
  server.stop();

  std::vector<std::uint32_t> order;
  for (const DeviceRecord& r : server.trace()) order.push_back(r.site);
  // L in service; then B (9), C (7), A (5); K's request died with its process
  EXPECT_EQ(order, (std::vector<std::uint32_t>{1, 3, 4, 2}));
  EXPECT_FALSE(in_dev_shm(shm)) << shm << " left behind";
}

// A client's job (its own device code) runs in the client's process, with its own data, while
// the server holds the device for it: the server's record of the request ends after the job.
TEST(AcceleratorSharedMemory, AClientsJobRunsInItsOwnProcessWhileTheServerHoldsTheDevice) {
  const std::string shm = segment("job");
  int ends[2];
  ASSERT_EQ(pipe(ends), 0);
  Child J = fork_child([&] {
    SharedAccelerator acc(options(shm, false), std::make_unique<EmulatedDevice>());
    struct Ctx {
      pid_t ran_in = 0;
      int out;
    } ctx{0, ends[1]};
    DeviceWork w{0, 1'000'000, 0};
    w.job = [](void* c) noexcept {
      auto* x = static_cast<Ctx*>(c);
      x->ran_in = getpid();
      const char b = 'j';
      (void)!write(x->out, &b, 1);  // the parent reads it while the request is still in service
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    };
    w.job_context = &ctx;
    const bool ran = acc.call(9, 0, w, 4);
    acc.stop();
    return ran && ctx.ran_in == getpid() ? 0 : 1;
  });
  close(ends[1]);
  SharedAccelerator server(options(shm, true), std::make_unique<EmulatedDevice>());
  J.start();
  char b = 0;
  ASSERT_EQ(read(ends[0], &b, 1), 1);
  EXPECT_TRUE(server.trace().empty());  // the job runs: the request is not done yet
  EXPECT_TRUE(exited_ok(J.wait_status()));
  server.stop();
  ASSERT_EQ(server.trace().size(), 1u);
  EXPECT_EQ(server.trace()[0].site, 9u);
  EXPECT_FALSE(in_dev_shm(shm));
}

TEST(AcceleratorSharedMemory, AClientWhoseServerIsKilledIsReleasedAndRemovesTheSegment) {
  const std::string shm = segment("server");
  Child S = fork_child([&] {
    // the first request holds the device until the process is killed
    SharedAccelerator server(options(shm, true), std::make_unique<EmulatedDevice>([](Duration) { pause(); }));
    for (;;) pause();
    return 0;
  });
  S.start();
  wait_until([&] { return in_dev_shm(shm); }, "the server's segment");
  SharedAccelerator client(options(shm, false), std::make_unique<EmulatedDevice>());
  std::atomic<int> ran{-1};
  std::thread t([&] { ran = client.call(7, 0, DeviceWork{0, 1'000'000, 0}, 3) ? 1 : 0; });
  wait_until([&] { return client.requests() == 1 && client.queued() == 0; }, "the request in service");
  kill(S.pid, SIGKILL);
  EXPECT_TRUE(killed(S.wait_status()));
  t.join();
  EXPECT_EQ(ran.load(), 0);
  EXPECT_EQ(client.lost(), 1u);
  EXPECT_FALSE(client.call(8, 0, DeviceWork{}, 3));  // no server: refused at once, not queued
  client.stop();
  EXPECT_FALSE(in_dev_shm(shm)) << shm << " left behind";
}

TEST(AcceleratorSharedMemory, TheNextStartResetsTheSegmentOfUsersThatWereAllKilled) {
  const std::string shm = segment("stale");
  Child D = fork_child([&] {
    AcceleratorOptions o = options(shm, false);
    o.capacity = 8;  // the next start has another capacity: it must reset the segment, not join it
    SharedAccelerator client(o, std::make_unique<EmulatedDevice>());
    client.submit(9, 5, 0, DeviceWork{0, 1'000'000, 0}, nullptr, nullptr, 0);  // queued, no server yet
    raise(SIGKILL);
    return 4;
  });
  D.start();
  EXPECT_TRUE(killed(D.wait_status()));
  ASSERT_TRUE(in_dev_shm(shm));  // every user was killed: the file stays until the next start
  SharedAccelerator server(options(shm, true), std::make_unique<EmulatedDevice>());
  EXPECT_TRUE(server.call(2, 0, DeviceWork{0, 1'000'000, 0}, 1));
  server.stop();
  std::vector<std::uint32_t> sites;
  for (const DeviceRecord& r : server.trace()) sites.push_back(r.site);
  EXPECT_EQ(sites, std::vector<std::uint32_t>{2});  // the dead process's request is gone
  EXPECT_FALSE(in_dev_shm(shm));
}

}  // namespace
}  // namespace chainrt::runtime
