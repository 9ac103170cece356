// Workload generators (generator.hpp): xoshiro256** / splitmix64, UUniFast(-discard),
// RandFixedSum, the EDF ready-queue paper's Fig. 7 generator (Sec. VI-C), its partitioned
// single-threaded variant and CROS-RT's UUniFast chains. Only integer arithmetic and IEEE
// double +,-,*,/ and std::pow feed the output, so one seed gives one model.
#include "chainrt/analysis/generator.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <stdexcept>
#include <string>

#include "chainrt/model/yaml_io.hpp"

namespace chainrt::gen {

std::uint64_t splitmix64(std::uint64_t& state) {
  std::uint64_t z = (state += 0x9E3779B97F4A7C15ULL);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

Rng::Rng(std::uint64_t seed) {
  std::uint64_t st = seed;
  for (auto& s : s_) s = splitmix64(st);
}

static inline std::uint64_t rotl(std::uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

std::uint64_t Rng::next() {
  const std::uint64_t result = rotl(s_[1] * 5, 7) * 9;
  const std::uint64_t t = s_[1] << 17;
  s_[2] ^= s_[0];
  s_[3] ^= s_[1];
  s_[1] ^= s_[2];
  s_[0] ^= s_[3];
  s_[2] ^= t;
  s_[3] = rotl(s_[3], 45);
  return result;
}

double Rng::uniform01() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }

std::int64_t Rng::uniform_int(std::int64_t lo, std::int64_t hi) {
  if (hi <= lo) return lo;
  const std::uint64_t range = static_cast<std::uint64_t>(hi - lo) + 1;  // 0 means 2^64
  if (range == 0) return static_cast<std::int64_t>(next());
  const std::uint64_t limit = std::numeric_limits<std::uint64_t>::max() - std::numeric_limits<std::uint64_t>::max() % range;
  std::uint64_t x;
  do x = next();
  while (x >= limit);
  return lo + static_cast<std::int64_t>(x % range);
}

std::uint64_t Rng::stream_seed(std::uint64_t base, std::uint64_t index) {
  std::uint64_t st = base ^ (index * 0xD1B54A32D192ED03ULL);
  splitmix64(st);
  return splitmix64(st);
}

std::vector<double> uunifast(Rng& rng, int n, double total) {
  std::vector<double> u(std::max(n, 0));
  if (n <= 0) return u;
  double sum = total;
  for (int i = 1; i < n; ++i) {
    double next = sum * std::pow(rng.uniform01(), 1.0 / static_cast<double>(n - i));
    u[i - 1] = sum - next;
    sum = next;
  }
  u[n - 1] = sum;
  return u;
}

std::optional<std::vector<double>> uunifast_discard(Rng& rng, int n, double total, double cap, int max_tries) {
  for (int k = 0; k < max_tries; ++k) {
    auto u = uunifast(rng, n, total);
    if (std::all_of(u.begin(), u.end(), [&](double x) { return x <= cap; })) return u;
  }
  return std::nullopt;
}

// Stafford's randfixedsum (the algorithm Emberson et al. distribute for task-set generation),
// for one vector; indices follow the original 1-based description shifted to 0-based.
std::vector<double> randfixedsum(Rng& rng, int n, double total, double lo, double hi) {
  if (n <= 0) return {};
  if (hi <= lo || total < n * lo || total > n * hi) throw std::invalid_argument("randfixedsum: infeasible sum");
  if (n == 1) return {total};
  double s = (total - n * lo) / (hi - lo);
  int k = std::max(std::min(static_cast<int>(std::floor(s)), n - 1), 0);
  s = std::max(std::min(s, static_cast<double>(k + 1)), static_cast<double>(k));
  std::vector<double> s1(n), s2(n);
  for (int i = 0; i < n; ++i) {
    s1[i] = s - static_cast<double>(k - i);
    s2[i] = static_cast<double>(k + n - i) - s;
  }
  std::vector<std::vector<double>> w(n, std::vector<double>(n + 1, 0.0));
  std::vector<std::vector<double>> t(n - 1, std::vector<double>(n, 0.0));
  w[0][1] = std::numeric_limits<double>::max();
  const double tiny = std::numeric_limits<double>::denorm_min();
  for (int i = 2; i <= n; ++i) {
    for (int c = 1; c <= i; ++c) {
      double tmp1 = w[i - 2][c] * s1[c - 1] / i;
      double tmp2 = w[i - 2][c - 1] * s2[n - i + c - 1] / i;
      w[i - 1][c] = tmp1 + tmp2;
      double tmp3 = w[i - 1][c] + tiny;
      bool tmp4 = s2[n - i + c - 1] > s1[c - 1];
      t[i - 2][c - 1] = tmp4 ? tmp2 / tmp3 : 1.0 - tmp1 / tmp3;
    }
  }
  std::vector<double> x(n, 0.0);
  double sm = 0.0, pr = 1.0;
  int j = k + 1;  // 1-based column
  for (int i = n - 1; i >= 1; --i) {
    double rt = rng.uniform01(), rs = rng.uniform01();
    int e = (rt <= t[i - 1][j - 1]) ? 1 : 0;
    double sx = std::pow(rs, 1.0 / i);
    sm += (1.0 - sx) * pr * s / (i + 1);
    pr *= sx;
    x[n - i - 1] = sm + pr * e;
    s -= e;
    j -= e;
  }
  x[n - 1] = sm + pr * s;
  for (int i = n - 1; i > 0; --i) std::swap(x[i], x[rng.uniform_int(0, i)]);  // random order
  for (auto& v : x) v = (hi - lo) * v + lo;
  return x;
}

namespace {

Duration round_units(double v) { return static_cast<Duration>(std::llround(v)); }

std::string idx(const char* prefix, std::size_t i) { return prefix + std::to_string(i); }

}  // namespace

Model edf_paper_system(const EdfPaperParams& p, std::uint64_t seed) {
  if (p.m < 1 || p.n < 1 || p.b < 1) throw std::invalid_argument("edf_paper_system: m, n, b must be >= 1");
  Rng rng(seed);
  Model model;
  model.name = "edf-paper-m" + std::to_string(p.m) + "-seed" + std::to_string(seed);
  model.hosts.push_back(Host{"host", p.m});
  Executor ex;
  ex.name = "executor";
  ex.host = "host";
  ex.policy = p.policy;
  for (int t = 0; t < p.m; ++t) ex.threads.push_back(Thread{idx("t", t), {t}, std::nullopt, std::nullopt, ""});
  model.executors.push_back(ex);

  const int n_chains = static_cast<int>(rng.uniform_int(std::min(2, p.n), p.n));
  std::vector<int> sizes(n_chains);
  for (auto& s : sizes) s = static_cast<int>(rng.uniform_int(std::min(2, p.b), p.b));
  // Chain utilisations: UUniFast-discard of m*U_norm; shares above 1 set to 1 (Sec. VI-C). A
  // total above n is infeasible for the discard rule, so a plain UUniFast draw is clamped then.
  const double total = p.m * p.u_norm;
  std::vector<double> cu;
  if (total <= n_chains) {
    auto d = uunifast_discard(rng, n_chains, total, 1.0, 1000);
    cu = d ? *d : uunifast(rng, n_chains, total);
  } else {
    cu = uunifast(rng, n_chains, total);
  }
  for (auto& u : cu) u = std::min(u, 1.0);

  struct Gen {
    std::string name;
    int chain;
    int pos;
  };
  std::vector<Gen> all;
  std::vector<std::int64_t> periods(n_chains);
  std::vector<std::vector<Duration>> wcets(n_chains);
  for (int i = 0; i < n_chains; ++i) {
    periods[i] = rng.uniform_int(p.period_min, p.period_max);
    auto share = uunifast(rng, sizes[i], cu[i]);
    for (int j = 0; j < sizes[i]; ++j) {
      Duration units = std::max<Duration>(1, round_units(static_cast<double>(periods[i]) * share[j]));
      wcets[i].push_back(units * p.time_unit);
      all.push_back(Gen{"c" + std::to_string(i) + "_" + std::to_string(j), i, j});
    }
  }
  // Mutually exclusive groups: count uniform in [0, g]; round(α·|C|) callbacks spread over them.
  const int n_groups = p.g > 0 ? static_cast<int>(rng.uniform_int(0, p.g)) : 0;
  std::vector<int> group_of(all.size(), -1);
  if (n_groups > 0) {
    int in_groups = static_cast<int>(std::llround(p.alpha * static_cast<double>(all.size())));
    in_groups = std::clamp(in_groups, 0, static_cast<int>(all.size()));
    std::vector<int> order(all.size());
    std::iota(order.begin(), order.end(), 0);
    for (int i = static_cast<int>(order.size()) - 1; i > 0; --i) std::swap(order[i], order[rng.uniform_int(0, i)]);
    for (int k = 0; k < in_groups; ++k) group_of[order[k]] = static_cast<int>(rng.uniform_int(0, n_groups - 1));
  }
  // Deadline-monotonic chain ranks (larger = more important), ties by index.
  std::vector<int> by_deadline(n_chains);
  std::iota(by_deadline.begin(), by_deadline.end(), 0);
  std::stable_sort(by_deadline.begin(), by_deadline.end(), [&](int a, int b) { return periods[a] < periods[b]; });
  std::vector<int> rank(n_chains);
  for (int r = 0; r < n_chains; ++r) rank[by_deadline[r]] = n_chains - r;

  for (int i = 0; i < n_chains; ++i) {
    model.nodes.push_back(Node{idx("node", i), "executor"});
    model.groups.push_back(CallbackGroup{idx("node", i) + "/reentrant", GroupType::Reentrant, idx("node", i)});
  }
  for (int g = 0; g < n_groups; ++g) {
    model.nodes.push_back(Node{idx("mx_node", g), "executor"});
    model.groups.push_back(CallbackGroup{idx("mx", g), GroupType::MutuallyExclusive, idx("mx_node", g)});
  }
  std::size_t flat = 0;
  for (int i = 0; i < n_chains; ++i) {
    Chain chain;
    chain.name = idx("chain", i);
    chain.period = periods[i] * p.time_unit;
    chain.deadline = chain.period;
    chain.priority = rank[i];
    for (int j = 0; j < sizes[i]; ++j, ++flat) {
      Callback cb;
      cb.name = all[flat].name;
      cb.wcet = wcets[i][j];
      cb.priority = rank[i] * 1024 + j;
      if (group_of[flat] >= 0) {
        cb.node = idx("mx_node", group_of[flat]);
        cb.group = idx("mx", group_of[flat]);
      } else {
        cb.node = idx("node", i);
        cb.group = idx("node", i) + "/reentrant";
      }
      if (j == 0) {
        cb.kind = CallbackKind::Timer;
        cb.period = chain.period;
      } else {
        cb.kind = CallbackKind::Subscription;
        cb.topic = "t" + std::to_string(i) + "_" + std::to_string(j);
      }
      if (j + 1 < sizes[i]) {
        std::string out = "t" + std::to_string(i) + "_" + std::to_string(j + 1);
        cb.publishes.push_back(out);
        model.topics.push_back(Topic{out, 64});
      }
      chain.callbacks.push_back(cb.name);
      model.callbacks.push_back(cb);
    }
    model.chains.push_back(chain);
  }
  validate(model, model.name);
  if (p.executors > 1) return partition_single_threaded(model, p.policy);
  return model;
}

Model partition_single_threaded(const Model& multi, Policy policy) {
  Model m = multi;
  const int cores = m.hosts.empty() ? 1 : m.hosts.front().cores;
  const std::string host = m.hosts.empty() ? std::string("host") : m.hosts.front().name;
  // Chains that share a mutually exclusive group stay together (union-find over chains).
  const std::size_t nc = m.chains.size();
  std::vector<std::size_t> parent(nc);
  std::iota(parent.begin(), parent.end(), 0);
  auto find = [&](std::size_t x) {
    while (parent[x] != x) x = parent[x] = parent[parent[x]];
    return x;
  };
  std::vector<std::string> group_first_chain_group;
  std::vector<long> group_owner(m.groups.size(), -1);
  for (std::size_t i = 0; i < nc; ++i)
    for (const auto& name : m.chains[i].callbacks) {
      const Callback& cb = m.callback(name);
      std::size_t g = 0;
      while (g < m.groups.size() && m.groups[g].name != cb.group) ++g;
      if (g == m.groups.size() || m.groups[g].type != GroupType::MutuallyExclusive) continue;
      if (group_owner[g] < 0) group_owner[g] = static_cast<long>(i);
      else parent[find(i)] = find(static_cast<std::size_t>(group_owner[g]));
    }
  std::vector<std::vector<std::size_t>> clusters;
  std::vector<long> cluster_of_root(nc, -1);
  for (std::size_t i = 0; i < nc; ++i) {
    std::size_t r = find(i);
    if (cluster_of_root[r] < 0) {
      cluster_of_root[r] = static_cast<long>(clusters.size());
      clusters.emplace_back();
    }
    clusters[cluster_of_root[r]].push_back(i);
  }
  std::vector<double> cu(clusters.size(), 0.0);
  for (std::size_t c = 0; c < clusters.size(); ++c)
    for (auto i : clusters[c]) cu[c] += m.chain_utilisation(m.chains[i]);
  std::vector<std::size_t> order(clusters.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return cu[a] > cu[b]; });
  std::vector<double> load(cores, 0.0);
  std::vector<int> exec_of_chain(nc, 0);
  for (auto c : order) {
    int best = static_cast<int>(std::min_element(load.begin(), load.end()) - load.begin());
    load[best] += cu[c];
    for (auto i : clusters[c]) exec_of_chain[i] = best;
  }
  m.executors.clear();
  for (int k = 0; k < cores; ++k) {
    Executor e;
    e.name = idx("executor", k);
    e.host = host;
    e.policy = policy;
    e.priority = 1;
    e.threads.push_back(Thread{"t0", {k}, std::nullopt, std::nullopt, ""});
    m.executors.push_back(e);
  }
  // Every node goes where its callbacks' chain goes (a node serves one cluster by construction).
  for (auto& node : m.nodes) {
    int where = 0;
    for (std::size_t i = 0; i < nc; ++i)
      for (const auto& name : m.chains[i].callbacks)
        if (m.callback(name).node == node.name) where = exec_of_chain[i];
    node.executor = idx("executor", where);
  }
  m.name = multi.name + "-partitioned";
  validate(m, m.name);
  return m;
}

Model uunifast_chains_system(const UUniFastChainsParams& p, std::uint64_t seed) {
  if (p.chains < 1 || p.callbacks < 1 || p.hosts < 1) throw std::invalid_argument("uunifast_chains_system: bad sizes");
  Rng rng(seed);
  Model model;
  model.name = "uunifast-chains-" + std::to_string(p.chains) + "-seed" + std::to_string(seed);
  for (int h = 0; h < p.hosts; ++h) model.hosts.push_back(Host{idx("host", h), 1});
  model.communication = p.comm;
  model.communication.measurements.clear();
  // Per host the chains' shares sum to total_u (each chain has callbacks on every host it visits).
  auto cu = uunifast_discard(rng, p.chains, p.total_u * std::min(p.hosts, p.callbacks), 1.0, 1000);
  std::vector<double> u = cu ? *cu : uunifast(rng, p.chains, std::min<double>(p.total_u, 1.0));
  std::vector<std::int64_t> periods(p.chains);
  for (auto& t : periods) t = rng.uniform_int(p.period_min, p.period_max);
  // Chain 0 is the most important; the others rate-monotonic.
  std::vector<int> order(p.chains);
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin() + 1, order.end(), [&](int a, int b) { return periods[a] < periods[b]; });
  std::vector<int> rank(p.chains);
  for (int r = 0; r < p.chains; ++r) rank[order[r]] = p.chains - r;
  for (int i = 0; i < p.chains; ++i) {
    // CROS-RT P3/P4: one single-threaded executor per chain and host, priority of the chain.
    for (int h = 0; h < p.hosts; ++h) {
      Executor e;
      e.name = "e" + std::to_string(i) + "_h" + std::to_string(h);
      e.host = idx("host", h);
      e.process = e.name;
      e.policy = Policy::Picas;
      e.priority = std::min(99, rank[i]);
      e.threads.push_back(Thread{"t0", {0}, std::min(99, rank[i]), std::nullopt, ""});
      model.executors.push_back(e);
      model.nodes.push_back(Node{"n" + std::to_string(i) + "_h" + std::to_string(h), e.name});
    }
    auto share = uunifast(rng, p.callbacks, u[i]);
    Chain chain;
    chain.name = idx("chain", i);
    chain.period = periods[i] * p.time_unit;
    chain.deadline = chain.period;
    chain.priority = rank[i];
    for (int j = 0; j < p.callbacks; ++j) {
      Callback cb;
      cb.name = "c" + std::to_string(i) + "_" + std::to_string(j);
      cb.node = "n" + std::to_string(i) + "_h" + std::to_string(j % p.hosts);
      Duration w = std::max<Duration>(1000, static_cast<Duration>(std::llround(
                                                  static_cast<double>(chain.period) * share[j])));
      cb.wcet = w;
      cb.bcet = std::max<Duration>(1, w / 2);
      cb.priority = rank[i] * 1024 + j;
      if (j == 0) {
        cb.kind = CallbackKind::Timer;
        cb.period = chain.period;
      } else {
        cb.kind = CallbackKind::Subscription;
        cb.topic = "t" + std::to_string(i) + "_" + std::to_string(j);
      }
      if (j + 1 < p.callbacks) {
        std::string out = "t" + std::to_string(i) + "_" + std::to_string(j + 1);
        cb.publishes.push_back(out);
        model.topics.push_back(Topic{out, p.message_size});
      }
      chain.callbacks.push_back(cb.name);
      model.callbacks.push_back(cb);
    }
    model.chains.push_back(chain);
  }
  validate(model, model.name);
  return model;
}

}  // namespace chainrt::gen
