// chainrt runtime: the model of a system marked in code (see code_model.hpp).
#include "chainrt/runtime/code_model.hpp"

#include <algorithm>
#include <map>
#include <set>
#include <stdexcept>

#include "chainrt/model/yaml_io.hpp"
#include "chainrt/runtime/entity_binding.hpp"

namespace chainrt::runtime {

namespace {

template <class T>
T* find_named(std::vector<T>& v, const std::string& name) {
  for (auto& x : v)
    if (x.name == name) return &x;
  return nullptr;
}

// Names of the new callbacks: the mark's, else the executors' unmatched name, "#k" when taken.
std::string fresh_name(const CodeEntity& e, const std::set<std::string>& taken) {
  const std::string base = !e.name.empty() ? e.name : e.node + "/" + entity_label(e.kind, e.period, e.topic);
  std::string n = base;
  for (int k = 1; taken.count(n); ++k) n = base + "#" + std::to_string(k);
  return n;
}

Executor& the_executor(Model& m, const CodeMarks& marks, bool from_file) {
  if (from_file) {
    if (Executor* e = find_named(m.executors, marks.executor)) return *e;
    throw std::invalid_argument("the model file has no executor '" + marks.executor + "'");
  }
  m.name = "in_code";
  m.hosts.push_back(Host{"host", std::max(1, marks.host_cores)});
  Executor e;
  e.name = marks.executor.empty() ? "main" : marks.executor;
  e.host = "host";
  e.policy = marks.policy;
  for (int i = 0; marks.threads.empty() && i < std::max(1, marks.plain_threads); ++i)
    e.threads.push_back(Thread{"t" + std::to_string(i)});
  m.executors.push_back(std::move(e));
  return m.executors.back();
}

// Where the file has a value, it wins; the code fills what the file leaves open.
void merge_into_bound(Callback& cb, const CodeEntity& e, std::vector<std::string>& notes) {
  const std::string who = "'" + cb.name + "'";
  if (e.priority && cb.priority && *cb.priority != *e.priority)
    notes.push_back("priority " + std::to_string(*e.priority) + " of " + who + " in code: the model file's " +
                    std::to_string(*cb.priority) + " wins");
  if (e.priority && !cb.priority) cb.priority = e.priority;
  if (!e.name.empty() && e.name != cb.name)
    notes.push_back("the name '" + e.name + "' in code: the model file's callback " + who + " is this entity");
  if (e.wcet > 0 && e.wcet != cb.wcet) notes.push_back("the WCET of " + who + " in code: the model file's wins");
  if (!e.thread.empty() && !cb.affinity.empty() && cb.affinity != std::vector<std::string>{e.thread})
    notes.push_back("thread '" + e.thread + "' of " + who + " in code: the model file's affinity wins");
  if (!e.thread.empty() && cb.affinity.empty()) cb.affinity = {e.thread};
}

}  // namespace

CodeModel model_from_code(const CodeMarks& marks, const Model* base, bool require_wcet) {
  CodeModel out;
  Model& m = out.model;
  if (base) m = *base;
  Executor& ex = the_executor(m, marks, base != nullptr);
  const std::string exec_name = ex.name;
  for (const auto& t : marks.threads)
    if (!find_named(ex.threads, t.name)) ex.threads.push_back(Thread{t.name, t.cores, t.fifo_priority});

  std::set<std::string> taken;
  for (const auto& c : m.callbacks) taken.insert(c.name);
  // a node's groups other than its default one: "<node>/group<k>" in the order the entities show them
  std::map<std::pair<std::string, std::string>, std::string> group_names;
  std::map<std::string, int> groups_in_node;
  auto group_name = [&](const CodeEntity& e) {
    auto [it, fresh] = group_names.try_emplace({e.node, e.group});
    if (fresh) it->second = e.node + "/group" + std::to_string(++groups_in_node[e.node]);
    return it->second;
  };
  out.names.assign(marks.entities.size(), "");
  std::vector<bool> in_chain(marks.entities.size(), false);
  for (const auto& ch : marks.chains)
    for (std::size_t i : ch.entities) {
      if (i >= marks.entities.size()) throw std::invalid_argument("chain '" + ch.name + "': an entity of no node added");
      in_chain[i] = true;
    }
  for (std::size_t i = 0; i < marks.entities.size(); ++i) {
    const CodeEntity& e = marks.entities[i];
    if (!e.bound.empty()) {
      auto it = std::find_if(m.callbacks.begin(), m.callbacks.end(), [&](const Callback& c) { return c.name == e.bound; });
      if (it == m.callbacks.end()) throw std::invalid_argument("the model file has no callback '" + e.bound + "'");
      merge_into_bound(*it, e, out.notes);
      out.names[i] = e.bound;
      continue;
    }
    if (base && !e.marked && !in_chain[i]) continue;  // the file does not describe it: as before
    if (!find_named(m.nodes, e.node)) m.nodes.push_back(Node{e.node, exec_name});
    Callback cb;
    cb.name = fresh_name(e, taken);
    taken.insert(cb.name);
    cb.kind = e.kind;
    cb.node = e.node;
    if (!e.group.empty()) {
      cb.group = group_name(e);
      if (!find_named(m.groups, cb.group))
        m.groups.push_back(CallbackGroup{cb.group, e.reentrant ? GroupType::Reentrant : GroupType::MutuallyExclusive, e.node});
    }
    cb.wcet = e.wcet > 0 ? e.wcet : e.measured;
    if (cb.wcet <= 0) {
      out.unknown_wcet.push_back(cb.name);
      cb.wcet = 1;
    }
    cb.priority = e.priority;
    if (!e.thread.empty()) cb.affinity = {e.thread};
    cb.period = e.kind == CallbackKind::Timer ? e.period : 0;
    const std::string topic = strip_slash(e.topic);
    if (e.kind == CallbackKind::Subscription) {
      cb.topic = topic;
      if (!find_named(m.topics, topic)) m.topics.push_back(Topic{topic});
    } else if (e.kind == CallbackKind::Service || e.kind == CallbackKind::Client) {
      cb.service = topic;
      if (!find_named(m.services, topic)) m.services.push_back(Service{topic});
    }
    out.names[i] = cb.name;
    m.callbacks.push_back(std::move(cb));
  }
  if (require_wcet && !out.unknown_wcet.empty()) {
    std::string list;
    for (const auto& n : out.unknown_wcet) list += (list.empty() ? "" : ", ") + n;
    throw std::invalid_argument("no WCET for " + list +
                                ": give it in code (the mark's wcet) or save after the executor has run it");
  }

  // Chains: a file's chain of that name wins; hops from consecutive members.
  for (const auto& ch : marks.chains) {
    if (find_named(m.chains, ch.name)) {
      out.notes.push_back("chain '" + ch.name + "' in code: the model file's chain of that name wins");
      continue;
    }
    Chain c;
    c.name = ch.name;
    for (std::size_t i : ch.entities) c.callbacks.push_back(out.names[i]);
    for (std::size_t k = 1; k < ch.entities.size(); ++k) {
      const CodeEntity& to = marks.entities[ch.entities[k]];
      Callback* from = find_named(m.callbacks, out.names[ch.entities[k - 1]]);
      Callback* dest = find_named(m.callbacks, out.names[ch.entities[k]]);
      if (!from || !dest) continue;
      auto add = [](std::vector<std::string>& v, const std::string& s) {
        if (!s.empty() && std::find(v.begin(), v.end(), s) == v.end()) v.push_back(s);
      };
      if (to.kind == CallbackKind::Subscription) add(from->publishes, dest->topic);
      if (to.kind == CallbackKind::Service) add(from->calls, dest->service);
    }
    c.period = ch.period;
    c.deadline = ch.deadline;
    c.criticality_class = ch.criticality_class;
    c.criticality = ch.criticality;
    c.priority = ch.priority;
    m.chains.push_back(std::move(c));
  }
  validate(m, base ? "<model file and marks in code>" : "<marks in code>");
  m.reindex();
  return out;
}

}  // namespace chainrt::runtime
