// Model lookups and derived quantities (chain utilisation U_i = E_i / T_i, E_i = Σ_j e_{i,j}
// as in Sec. III of the EDF ready-queue paper; CROS-RT communication categories from placement).
#include "chainrt/model/model.hpp"
#include "chainrt/model/policy_list.hpp"

#include <algorithm>
#include <functional>
#include <stdexcept>

namespace chainrt {

namespace {
template <class T>
void build_index(const std::vector<T>& items, std::unordered_map<std::string, std::size_t>& ix) {
  ix.clear();
  ix.reserve(items.size());
  for (std::size_t i = 0; i < items.size(); ++i) ix.emplace(items[i].name, i);
}

template <class T>
const T& lookup(const std::vector<T>& items, const std::unordered_map<std::string, std::size_t>& ix,
                const std::string& name, const char* what) {
  auto it = ix.find(name);
  if (it == ix.end() || it->second >= items.size() || items[it->second].name != name)
    throw std::out_of_range(std::string("no ") + what + " named '" + name + "'");
  return items[it->second];
}
}  // namespace

bool Chain::is_linear() const {
  if (hops.size() + 1 != callbacks.size()) return false;
  for (std::size_t i = 0; i < hops.size(); ++i)
    if (hops[i].from != callbacks[i] || hops[i].to != callbacks[i + 1]) return false;
  return true;
}

std::vector<std::vector<std::string>> Chain::paths() const {
  std::vector<std::vector<std::string>> out;
  if (callbacks.empty()) return out;
  std::vector<std::string> path{callbacks.front()};
  std::function<void()> walk = [&]() {
    bool leaf = true;
    for (const auto& h : hops) {
      if (h.from != path.back()) continue;
      if (std::find(path.begin(), path.end(), h.to) != path.end()) continue;  // (cycles are rejected)
      leaf = false;
      path.push_back(h.to);
      walk();
      path.pop_back();
    }
    if (leaf) out.push_back(path);
  };
  walk();
  return out;
}

void Model::reindex() {
  build_index(callbacks, callback_ix_);
  build_index(chains, chain_ix_);
  build_index(nodes, node_ix_);
  build_index(executors, executor_ix_);
  build_index(groups, group_ix_);
  build_index(topics, topic_ix_);
  build_index(services, service_ix_);
  build_index(hosts, host_ix_);
}

const Callback& Model::callback(const std::string& n) const { return lookup(callbacks, callback_ix_, n, "callback"); }
const Chain& Model::chain(const std::string& n) const { return lookup(chains, chain_ix_, n, "chain"); }
const Node& Model::node(const std::string& n) const { return lookup(nodes, node_ix_, n, "node"); }
const Executor& Model::executor(const std::string& n) const { return lookup(executors, executor_ix_, n, "executor"); }
const CallbackGroup& Model::group(const std::string& n) const { return lookup(groups, group_ix_, n, "callback group"); }

const Topic* Model::topic(const std::string& n) const {
  auto it = topic_ix_.find(n);
  return it == topic_ix_.end() ? nullptr : &topics[it->second];
}
const Service* Model::service(const std::string& n) const {
  auto it = service_ix_.find(n);
  return it == service_ix_.end() ? nullptr : &services[it->second];
}
const Host* Model::host(const std::string& n) const {
  auto it = host_ix_.find(n);
  return it == host_ix_.end() ? nullptr : &hosts[it->second];
}

std::size_t Model::callback_index(const std::string& n) const {
  return static_cast<std::size_t>(&callback(n) - callbacks.data());
}
std::size_t Model::executor_index(const std::string& n) const {
  return static_cast<std::size_t>(&executor(n) - executors.data());
}

std::vector<std::size_t> Model::subscribers(const std::string& t) const {
  std::vector<std::size_t> out;
  for (std::size_t i = 0; i < callbacks.size(); ++i)
    if (!callbacks[i].topic.empty() && callbacks[i].topic == t) out.push_back(i);
  return out;
}

std::optional<std::size_t> Model::server_of(const std::string& s) const {
  for (std::size_t i = 0; i < callbacks.size(); ++i)
    if (callbacks[i].kind == CallbackKind::Service && callbacks[i].service == s) return i;
  return std::nullopt;
}

std::optional<std::size_t> Model::client_of(const std::string& node, const std::string& s) const {
  for (std::size_t i = 0; i < callbacks.size(); ++i)
    if (callbacks[i].kind == CallbackKind::Client && callbacks[i].service == s && callbacks[i].node == node) return i;
  return std::nullopt;
}

CommKind Model::placement_comm(const Callback& from, const Callback& to) const {
  const Executor& a = executor_of(from);
  const Executor& b = executor_of(to);
  if (a.name == b.name || a.process == b.process) return CommKind::IntraProcess;
  if (a.host == b.host) return CommKind::SameHost;
  return CommKind::Remote;
}

Duration Model::chain_wcet(const Chain& c) const {
  Duration sum = 0;
  for (const auto& name : c.callbacks) sum += callback(name).wcet;
  return sum;
}

double Model::chain_utilisation(const Chain& c) const {
  return c.period > 0 ? static_cast<double>(chain_wcet(c)) / static_cast<double>(c.period) : 0.0;
}

bool Model::operator==(const Model& o) const {
  return name == o.name && constrained_deadlines == o.constrained_deadlines && hosts == o.hosts &&
         executors == o.executors && nodes == o.nodes && groups == o.groups && topics == o.topics &&
         services == o.services && callbacks == o.callbacks && chains == o.chains && communication == o.communication;
}

namespace {
struct Names {
  const char* text;
  int value;
};
constexpr Names kKinds[] = {{"timer", 0},   {"subscription", 1}, {"service", 2},
                            {"client", 3},  {"fusion_input", 4}, {"fusion_trigger", 5}};
constexpr Names kGroups[] = {{"mutually_exclusive", 0}, {"reentrant", 1}};
constexpr Names kComms[] = {{"intra_process", 0}, {"same_host", 1}, {"remote", 2}};
constexpr Names kPolicies[] = {
#define CHAINRT_POLICY(id, name) {name, static_cast<int>(Policy::id)},
#include "chainrt/model/policies.def"
#undef CHAINRT_POLICY
};
constexpr Names kClasses[] = {{"rt", 0}, {"be", 1}};
constexpr Names kAccess[] = {{"direct", 0}, {"server", 1}};
constexpr Names kDevices[] = {{"emulated", 0}, {"cuda", 1}};
constexpr Names kPhases[] = {{"free", 0}, {"guaranteed", 1}, {"observed", 2}};
constexpr Names kHops[] = {{"topic", 0}, {"request", 1}, {"response", 2}};

template <std::size_t N>
const char* name_of(const Names (&table)[N], int v) {
  for (const auto& n : table)
    if (n.value == v) return n.text;
  return "?";
}
template <class E, std::size_t N>
std::optional<E> value_of(const Names (&table)[N], const std::string& s) {
  for (const auto& n : table)
    if (s == n.text) return static_cast<E>(n.value);
  return std::nullopt;
}
}  // namespace

const char* to_string(CallbackKind k) { return name_of(kKinds, static_cast<int>(k)); }
const char* to_string(GroupType t) { return name_of(kGroups, static_cast<int>(t)); }
const char* to_string(CommKind k) { return name_of(kComms, static_cast<int>(k)); }
const char* to_string(Policy p) { return name_of(kPolicies, static_cast<int>(p)); }
const char* to_string(CriticalityClass c) { return name_of(kClasses, static_cast<int>(c)); }
const char* to_string(AcceleratorAccess a) { return name_of(kAccess, static_cast<int>(a)); }
const char* to_string(AcceleratorDevice d) { return name_of(kDevices, static_cast<int>(d)); }
const char* to_string(TimerPhase p) { return name_of(kPhases, static_cast<int>(p)); }
const char* to_string(HopKind k) { return name_of(kHops, static_cast<int>(k)); }
std::optional<CallbackKind> callback_kind_from(const std::string& s) { return value_of<CallbackKind>(kKinds, s); }
std::optional<GroupType> group_type_from(const std::string& s) { return value_of<GroupType>(kGroups, s); }
std::optional<CommKind> comm_kind_from(const std::string& s) { return value_of<CommKind>(kComms, s); }
std::optional<Policy> policy_from(const std::string& s) { return value_of<Policy>(kPolicies, s); }
std::string policy_list(bool (*keep)(Policy), bool and_last) {
  std::vector<const char*> names;
  for (const auto& n : kPolicies)
    if (keep == nullptr || keep(static_cast<Policy>(n.value))) names.push_back(n.text);
  std::string out;
  for (std::size_t i = 0; i < names.size(); ++i) {
    if (i > 0) out += and_last && i + 1 == names.size() ? " and " : ", ";
    out += names[i];
  }
  return out;
}
std::optional<CriticalityClass> criticality_class_from(const std::string& s) {
  return value_of<CriticalityClass>(kClasses, s);
}
std::optional<AcceleratorAccess> accelerator_access_from(const std::string& s) {
  return value_of<AcceleratorAccess>(kAccess, s);
}
std::optional<AcceleratorDevice> accelerator_device_from(const std::string& s) {
  return value_of<AcceleratorDevice>(kDevices, s);
}
std::optional<TimerPhase> timer_phase_from(const std::string& s) { return value_of<TimerPhase>(kPhases, s); }

}  // namespace chainrt
