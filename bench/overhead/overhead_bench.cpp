// Executor overhead benchmark: the workload of the EDF ready-queue paper's Fig. 6 (Sec. VI-B):
// one timer publishing to N subscribers, callbacks with no work, 2 executor threads; the
// end-to-end latency of an instance is the time from the timer's release to the completion of
// the last of the N subscriber callbacks. Measured for every chainrt policy and for a minimal
// hand-written single-threaded rcl loop (rcl_wait over the timer and the N subscriptions, the
// floor of what rcl + Fast DDS cost), all in one run, interleaved, with repetitions so that the
// noise of this machine is visible. Ratios to the ros-default policy are printed.
// "edf-full-refresh" is the EDF executor with the EDF paper's refresh (every subscription
// polled before every selection, ExecutorOptions::full_refresh): the baseline to beat.
//
// usage: chainrt-bench-overhead [--n 1,2,5,...] [--reps 3] [--instances 60] [--period 10ms]
//                               [--policies ros-default,fp,...] [--fifo PRIO] [--json FILE]
#include <rcl/error_handling.h>
#include <rcl/rcl.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <std_msgs/msg/string.hpp>

#include "chainrt/runtime/executor.hpp"
#include "chainrt/sched/policy.hpp"

using chainrt::Duration;
using chainrt::Policy;
using namespace chainrt::runtime;
using Str = std_msgs::msg::String;

namespace {

// Completion tracking of one instance across N subscriber callbacks.
struct Tracker {
  explicit Tracker(int n, int capacity) : n(n) { samples.reserve(capacity); }
  int n;
  static constexpr int kRing = 256;
  std::array<std::atomic<int>, kRing> done{};
  std::array<std::atomic<Duration>, kRing> release{};
  std::mutex mu;
  std::vector<Duration> samples;
  std::atomic<long> completed{0};
  int warmup = 10;

  void released(long k, Duration rel) {
    done[k % kRing].store(0);
    release[k % kRing].store(rel);
  }
  void finished(long k) {
    if (done[k % kRing].fetch_add(1) + 1 == n) {
      const Duration lat = now_ns() - release[k % kRing].load();
      if (k >= warmup) {
        std::lock_guard<std::mutex> g(mu);
        samples.push_back(lat);
      }
      completed.fetch_add(1);
    }
  }
};

bool wait_for(const std::function<bool()>& pred, int seconds) {
  const Duration end = now_ns() + Duration{seconds} * 1'000'000'000;
  while (!pred()) {
    if (now_ns() > end) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  return true;
}

std::string topic_for(std::string what, int n, int rep) {
  for (auto& ch : what)
    if (ch == '-') ch = '_';
  return "/crt_bench_" + std::to_string(getpid()) + "_" + what + "_" + std::to_string(n) + "_" +
         std::to_string(rep);
}

// One measurement under the chainrt executor.
int g_fifo = 0;  // --fifo: SCHED_FIFO priority of the executor threads and of the rcl loop

std::vector<Duration> run_chainrt(Context& ctx, Policy policy, int n, int instances,
                                  Duration period, int rep, bool full_refresh = false) {
  Node pub_node(ctx, "bench_timer");
  Node sub_node(ctx, "bench_subs");
  const std::string topic = topic_for(chainrt::to_string(policy), n, rep);
  auto pub = pub_node.create_publisher<Str>(topic, 10);
  Tracker tr(n, instances);
  std::atomic<long> k{0};
  CallbackOptions to;
  to.name = "timer";
  to.priority = 1;
  Str msg;
  pub_node.create_timer(period, [&] {
    const long i = k.fetch_add(1);
    tr.released(i, current_stamp().release);
    msg.data = std::to_string(i);
    pub->publish(msg);
  }, to);
  for (int s = 0; s < n; ++s) {
    CallbackOptions so;
    so.name = "sub" + std::to_string(s);
    so.priority = 2;
    sub_node.create_subscription<Str>(topic, 10, [&](const Str& m) {
      tr.finished(std::stol(m.data));
    }, so, [&](const Str&) {
      Stamp st;  // the chain's deadline: one period after the release (EDF / mixed ordering)
      st.deadline = now_ns() + period;
      return st;
    });
  }
  if (!wait_for([&] { return pub->subscription_count() >= static_cast<std::size_t>(n); }, 60))
    std::fprintf(stderr, "warning: only %zu of %d subscriptions matched\n", pub->subscription_count(), n);
  ExecutorOptions eo;
  eo.policy = policy;
  eo.full_refresh = full_refresh;
  eo.threads.resize(2);
  if (g_fifo > 0)
    for (auto& t : eo.threads) t.fifo_priority = g_fifo;
  eo.trace_capacity = 16;
  eo.samples_per_chain = 16;
  Executor ex(ctx, eo);
  ex.add_node(pub_node);
  ex.add_node(sub_node);
  // the timer stamps its instances with their release: give it a chain
  ex.add_chain(ChainSpec{"fanout", {"timer"}, {}, period, period});
  ex.start();
  wait_for([&] { return tr.completed.load() >= instances + tr.warmup; },
           static_cast<int>(instances * period / 1'000'000'000 + 60));
  ex.request_stop();
  ex.join();
  std::lock_guard<std::mutex> g(tr.mu);
  return tr.samples;
}

#define RCL_OK(x)                                                                 \
  do {                                                                            \
    if ((x) != RCL_RET_OK) {                                                      \
      std::fprintf(stderr, "%s failed: %s\n", #x, rcl_get_error_string().str);    \
      rcl_reset_error();                                                          \
      std::exit(1);                                                               \
    }                                                                             \
  } while (0)

// The floor: a minimal hand-written single-threaded rcl loop doing the same work.
std::vector<Duration> run_rcl_loop(Context& ctx, int n, int instances, Duration period, int rep) {
  Node node(ctx, "bench_rcl_loop");
  const std::string topic = topic_for("rcl", n, rep);
  auto pub = node.create_publisher<Str>(topic, 10);
  const auto* ts = rosidl_typesupport_cpp::get_message_type_support_handle<Str>();
  std::vector<rcl_subscription_t> subs(n);
  for (auto& s : subs) {
    s = rcl_get_zero_initialized_subscription();
    rcl_subscription_options_t o = rcl_subscription_get_default_options();
    o.qos.depth = 10;
    RCL_OK(rcl_subscription_init(&s, node.get(), ts, topic.c_str(), &o));
  }
  rcl_allocator_t alloc = rcl_get_default_allocator();
  rcl_clock_t clock;
  RCL_OK(rcl_clock_init(RCL_STEADY_TIME, &clock, &alloc));
  rcl_timer_t timer = rcl_get_zero_initialized_timer();
  RCL_OK(rcl_timer_init2(&timer, &clock, ctx.get(), period, nullptr, alloc, true));
  rcl_wait_set_t ws = rcl_get_zero_initialized_wait_set();
  RCL_OK(rcl_wait_set_init(&ws, n, 0, 1, 0, 0, 0, ctx.get(), alloc));
  if (!wait_for([&] { return pub->subscription_count() >= static_cast<std::size_t>(n); }, 60))
    std::fprintf(stderr, "warning: rcl loop: only %zu of %d matched\n", pub->subscription_count(), n);
  Tracker tr(n, instances);
  long k = 0;
  Str msg, in;
  // the loop runs in a thread with the executor threads' scheduling parameters
  chainrt::sched::ThreadSpec spec;
  spec.name = "rcl-loop";
  if (g_fifo > 0) spec.fifo_priority = g_fifo;
  std::thread loop_thread([&] {
  apply_thread_spec(spec);
  while (tr.completed.load() < instances + tr.warmup) {
    RCL_OK(rcl_wait_set_clear(&ws));
    RCL_OK(rcl_wait_set_add_timer(&ws, &timer, nullptr));
    for (auto& s : subs) RCL_OK(rcl_wait_set_add_subscription(&ws, &s, nullptr));
    rcl_ret_t rc = rcl_wait(&ws, RCL_S_TO_NS(5));
    rcl_reset_error();
    if (rc == RCL_RET_TIMEOUT) break;
    if (ws.timers[0]) {
      rcl_timer_call_info_t info;
      if (rcl_timer_call_with_info(&timer, &info) == RCL_RET_OK) {
        tr.released(k, info.expected_call_time);
        msg.data = std::to_string(k++);
        pub->publish(msg);
      }
      rcl_reset_error();
    }
    for (int s = 0; s < n; ++s) {
      if (!ws.subscriptions[s]) continue;
      rmw_message_info_t mi = rmw_get_zero_initialized_message_info();
      while (rcl_take(&subs[s], &in, &mi, nullptr) == RCL_RET_OK) tr.finished(std::stol(in.data));
      rcl_reset_error();
    }
  }
  });
  loop_thread.join();
  rcl_reset_error();
  if (rcl_wait_set_fini(&ws) != RCL_RET_OK) rcl_reset_error();
  if (rcl_timer_fini(&timer) != RCL_RET_OK) rcl_reset_error();
  if (rcl_clock_fini(&clock) != RCL_RET_OK) rcl_reset_error();
  for (auto& s : subs)
    if (rcl_subscription_fini(&s, node.get()) != RCL_RET_OK) rcl_reset_error();
  std::lock_guard<std::mutex> g(tr.mu);
  return tr.samples;
}

std::vector<std::string> split(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream ss(s);
  std::string x;
  while (std::getline(ss, x, ',')) out.push_back(x);
  return out;
}

double mean(const std::vector<Duration>& v) {
  if (v.empty()) return 0;
  double s = 0;
  for (Duration x : v) s += static_cast<double>(x);
  return s / static_cast<double>(v.size());
}

// The command line (std::nullopt after the usage line on a bad one).
struct BenchArgs {
  std::vector<int> ns = {1, 2, 5, 10, 20, 50, 100, 150, 200};
  std::vector<std::string> configs;  // every policy, then the two baselines of this benchmark
  int reps = 3, instances = 60;
  Duration period = 10'000'000;
  std::string json_path;
};

std::optional<BenchArgs> parse_args(int argc, char** argv) {
  BenchArgs b;
  for (const auto& d : chainrt::sched::policies()) b.configs.emplace_back(d.name);
  b.configs.insert(b.configs.end(), {"rcl-loop", "edf-full-refresh"});
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto next = [&] { return std::string(i + 1 < argc ? argv[++i] : ""); };
    if (a == "--n") {
      b.ns.clear();
      for (auto& x : split(next())) b.ns.push_back(std::stoi(x));
    } else if (a == "--policies") b.configs = split(next());
    else if (a == "--reps") b.reps = std::stoi(next());
    else if (a == "--instances") b.instances = std::stoi(next());
    else if (a == "--period") b.period = static_cast<Duration>(std::stod(next()) * 1e6);  // ms
    else if (a == "--json") b.json_path = next();
    else if (a == "--fifo") g_fifo = std::stoi(next());
    else {
      std::fprintf(stderr, "usage: %s [--n 1,2,5] [--policies ros-default,edf,rcl-loop] [--reps 3] "
                   "[--instances 60] [--period MS] [--fifo PRIO] [--json FILE]\n", argv[0]);
      return std::nullopt;
    }
  }
  return b;
}

// results[config][n] = per-repetition sample vectors
using Results = std::map<std::string, std::map<int, std::vector<std::vector<Duration>>>>;

Results measure(const BenchArgs& b) {
  Context ctx;
  Results res;
  for (int n : b.ns)
    for (int rep = 0; rep < b.reps; ++rep)
      for (const auto& c : b.configs) {  // interleaved: machine noise hits every config alike
        std::vector<Duration> s;
        if (c == "rcl-loop") s = run_rcl_loop(ctx, n, b.instances, b.period, rep);
        else if (c == "edf-full-refresh") s = run_chainrt(ctx, Policy::Edf, n, b.instances, b.period, rep, true);
        else s = run_chainrt(ctx, *chainrt::policy_from(c), n, b.instances, b.period, rep);
        res[c][n].push_back(std::move(s));
        std::fprintf(stderr, "n=%d rep=%d %s: mean %.1f us\n", n, rep, c.c_str(), mean(res[c][n].back()) / 1e3);
      }
  return res;
}

bool is_baseline(const std::string& c) { return c == "ros-default" || c == "rcl-loop" || c == "edf-full-refresh"; }

// The table of means (mean over all samples of a point, spread = min..max of the
// per-repetition means), each point also into js; the worst policy/ros-default ratio and where.
std::pair<double, std::string> mean_table(const BenchArgs& b, Results& res, std::ostringstream& js) {
  std::printf("end-to-end latency (us): mean over %d reps x %d instances [min..max of rep means];"
              " ratio = mean / ros-default mean\n", b.reps, b.instances);
  std::printf("%5s", "N");
  for (const auto& c : b.configs) std::printf(" %28s", c.c_str());
  std::printf("\n");
  bool first = true;
  double worst_ratio = 0;
  std::string worst;
  for (int n : b.ns) {
    std::printf("%5d", n);
    auto all = [&](const std::string& c) {
      std::vector<Duration> v;
      for (auto& r : res[c][n]) v.insert(v.end(), r.begin(), r.end());
      return v;
    };
    const double base = res.count("ros-default") ? mean(all("ros-default")) : 0;
    for (const auto& c : b.configs) {
      std::vector<Duration> v = all(c);
      std::vector<double> rep_means;
      for (auto& r : res[c][n]) rep_means.push_back(mean(r));
      const double m = mean(v);
      const double lo = rep_means.empty() ? 0 : *std::min_element(rep_means.begin(), rep_means.end());
      const double hi = rep_means.empty() ? 0 : *std::max_element(rep_means.begin(), rep_means.end());
      std::sort(v.begin(), v.end());
      const Duration p50 = v.empty() ? 0 : v[v.size() / 2];
      const Duration p99 = v.empty() ? 0 : v[std::min(v.size() - 1, static_cast<std::size_t>(std::ceil(0.99 * v.size())) - 1)];
      const double ratio = base > 0 ? m / base : 0;
      char cell[64];
      std::snprintf(cell, sizeof cell, "%.0f [%.0f..%.0f] x%.2f", m / 1e3, lo / 1e3, hi / 1e3, ratio);
      std::printf(" %28s", cell);
      if (!is_baseline(c) && ratio > worst_ratio) {
        worst_ratio = ratio;
        worst = c + " at N=" + std::to_string(n);
      }
      js << (first ? "" : ", ") << "{\"config\": \"" << c << "\", \"n\": " << n
         << ", \"samples\": " << v.size() << ", \"mean_ns\": " << m << ", \"rep_mean_min_ns\": " << lo
         << ", \"rep_mean_max_ns\": " << hi << ", \"p50_ns\": " << p50 << ", \"p99_ns\": " << p99
         << ", \"ratio_to_ros_default\": " << ratio << "}";
      first = false;
    }
    std::printf("\n");
  }
  return {worst_ratio, worst};
}

// The same with medians (less sensitive to this machine's stalls); the worst ratio and where.
std::pair<double, std::string> median_table(const BenchArgs& b, Results& res) {
  std::printf("median end-to-end latency (us) and ratio to the ros-default median\n%5s", "N");
  for (const auto& c : b.configs) std::printf(" %16s", c.c_str());
  std::printf("\n");
  double worst_p50 = 0;
  std::string worst_p50_at;
  for (int n : b.ns) {
    auto median = [&](const std::string& c) {
      std::vector<Duration> v;
      for (auto& r : res[c][n]) v.insert(v.end(), r.begin(), r.end());
      std::sort(v.begin(), v.end());
      return v.empty() ? 0.0 : static_cast<double>(v[v.size() / 2]);
    };
    const double base = res.count("ros-default") ? median("ros-default") : 0;
    std::printf("%5d", n);
    for (const auto& c : b.configs) {
      const double m = median(c), ratio = base > 0 ? m / base : 0;
      char cell[48];
      std::snprintf(cell, sizeof cell, "%.0f x%.2f", m / 1e3, ratio);
      std::printf(" %16s", cell);
      if (!is_baseline(c) && ratio > worst_p50) {
        worst_p50 = ratio;
        worst_p50_at = c + " at N=" + std::to_string(n);
      }
    }
    std::printf("\n");
  }
  return {worst_p50, worst_p50_at};
}

}  // namespace

int main(int argc, char** argv) {
  const std::optional<BenchArgs> args = parse_args(argc, argv);
  if (!args) return 1;
  const BenchArgs& b = *args;
  Results res = measure(b);
  std::ostringstream js;
  js << "{\"period_ns\": " << b.period << ", \"reps\": " << b.reps << ", \"instances\": " << b.instances
     << ", \"points\": [";
  const auto [worst_ratio, worst] = mean_table(b, res, js);
  const auto [worst_p50, worst_p50_at] = median_table(b, res);
  std::printf("worst chainrt policy / ros-default median ratio: %.2f (%s)\n", worst_p50,
              worst_p50_at.c_str());
  js << "], \"worst_ratio\": " << worst_ratio << ", \"worst\": \"" << worst
     << "\", \"worst_median_ratio\": " << worst_p50 << ", \"worst_median\": \"" << worst_p50_at
     << "\"}";
  std::printf("worst chainrt policy / ros-default ratio: %.2f (%s)\n", worst_ratio, worst.c_str());
  if (!b.json_path.empty()) std::ofstream(b.json_path) << js.str() << "\n";
  return 0;
}
