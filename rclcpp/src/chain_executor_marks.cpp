// chainrt rclcpp: priorities, deadlines and chains marked in code on the ChainExecutor (see
// chain_executor.hpp, "marks in code"). The marks and the executor's entities become the model
// library's Model through runtime::model_from_code (the one builder, chainrt.rclpy's too); the
// executor then binds to that model with the code it uses for a model file.
#include <rclcpp/callback_group.hpp>
#include <rclcpp/node_interfaces/node_base_interface.hpp>

#include <algorithm>
#include <cstdint>
#include <stdexcept>
#include <thread>
#include <unordered_map>

#include "chainrt/model/yaml_io.hpp"
#include "chainrt/rclcpp/chain_executor.hpp"
#include "chainrt/runtime/entity_binding.hpp"

namespace chainrt::rclcpp {

using runtime::strip_slash;

namespace {
int kind_rank(CallbackKind k) {  // a model's order within a node: timers, subscriptions, services, clients
  switch (k) {
    case CallbackKind::Timer: return 0;
    case CallbackKind::Service: return 2;
    case CallbackKind::Client: return 3;
    default: return 1;
  }
}
}  // namespace


Entity::Entity(const ::rclcpp::TimerBase::SharedPtr& t) : key_(t ? t->get_timer_handle().get() : nullptr) {}
Entity::Entity(const ::rclcpp::SubscriptionBase::SharedPtr& s)
    : key_(s ? s->get_subscription_handle().get() : nullptr) {}
Entity::Entity(const ::rclcpp::ServiceBase::SharedPtr& s) : key_(s ? s->get_service_handle().get() : nullptr) {}
Entity::Entity(const ::rclcpp::ClientBase::SharedPtr& c) : key_(c ? c->get_client_handle().get() : nullptr) {}

void ChainExecutor::check_markable() const {
  if (spinning.load())
    throw std::logic_error("chainrt::rclcpp::ChainExecutor: mark entities before spin*(), not while it spins");
  if (lame_) throw std::invalid_argument("chainrt::rclcpp::ChainExecutor: marks in code do not combine with the LaME controller (it plans from a model file)");
}

bool ChainExecutor::marks_pending() const {
  std::lock_guard<std::mutex> rl(rebuild_mutex_);
  return marks_ && marks_->dirty;
}

void ChainExecutor::mark(const Entity& e, CallbackMark m) {
  check_markable();
  if (!e.key()) throw std::invalid_argument("mark(): no entity (a null pointer)");
  std::lock_guard<std::mutex> rl(rebuild_mutex_);
  if (!marks_) marks_ = std::make_unique<Marks>();
  auto it = std::find_if(marks_->callbacks.begin(), marks_->callbacks.end(), [&](auto& p) { return p.first == e.key(); });
  if (it == marks_->callbacks.end()) {
    marks_->callbacks.emplace_back(e.key(), std::move(m));
  } else {  // a later mark adds to an earlier one
    if (!m.name.empty()) it->second.name = m.name;
    if (m.priority) it->second.priority = m.priority;
    if (m.wcet.count() > 0) it->second.wcet = m.wcet;
  }
  marks_->dirty = true;
}

void ChainExecutor::set_callback_priority(const Entity& e, int priority) {
  CallbackMark m;
  m.priority = priority;
  mark(e, std::move(m));
}

void ChainExecutor::add_chain(const std::string& name, const std::vector<Entity>& callbacks, ChainMark m) {
  check_markable();
  if (name.empty()) throw std::invalid_argument("add_chain(): a chain needs a name");
  if (callbacks.empty()) throw std::invalid_argument("add_chain('" + name + "'): a chain needs at least one callback");
  Marks::Chain c{name, {}, m};
  for (const auto& e : callbacks) {
    if (!e.key()) throw std::invalid_argument("add_chain('" + name + "'): no entity (a null pointer)");
    c.keys.push_back(e.key());
  }
  std::lock_guard<std::mutex> rl(rebuild_mutex_);
  if (!marks_) marks_ = std::make_unique<Marks>();
  auto it = std::find_if(marks_->chains.begin(), marks_->chains.end(), [&](auto& x) { return x.name == name; });
  if (it == marks_->chains.end()) marks_->chains.push_back(std::move(c));
  else *it = std::move(c);
  marks_->dirty = true;
}

void ChainExecutor::set_callback_group_thread(const ::rclcpp::CallbackGroup::SharedPtr& group, ThreadMark thread) {
  check_markable();
  if (!group) throw std::invalid_argument("set_callback_group_thread(): no callback group (a null pointer)");
  if (thread.name.empty()) throw std::invalid_argument("set_callback_group_thread(): the thread needs a name");
  std::lock_guard<std::mutex> rl(rebuild_mutex_);
  if (!marks_) marks_ = std::make_unique<Marks>();
  auto it = std::find_if(marks_->groups.begin(), marks_->groups.end(), [&](auto& p) { return p.first == group.get(); });
  if (it == marks_->groups.end()) marks_->groups.emplace_back(group.get(), std::move(thread));
  else it->second = std::move(thread);
  marks_->dirty = true;
}

std::vector<std::string> ChainExecutor::mark_notes() const {
  std::lock_guard<std::mutex> rl(rebuild_mutex_);
  return marks_ ? marks_->notes : std::vector<std::string>{};
}

std::vector<::rclcpp::node_interfaces::NodeBaseInterface::SharedPtr> ChainExecutor::live_nodes() const {
  std::vector<::rclcpp::node_interfaces::NodeBaseInterface::SharedPtr> nodes;
  for (auto& w : nodes_)
    if (auto n = w.lock()) nodes.push_back(n);
  for (auto& [wg, wn] : group_nodes_)
    if (auto n = wn.lock()) nodes.push_back(n);
  return nodes;
}

// The inputs of runtime::model_from_code: the listed entities node by node (in the order added),
// timers, subscriptions, services, clients (each in the order found), with their marks.
runtime::CodeMarks ChainExecutor::gather(std::vector<const void*>& keys) const {
  runtime::CodeMarks in;
  std::vector<std::string> node_order;
  std::unordered_map<const void*, std::string> group_names;
  {
    std::lock_guard<std::mutex> lk(nodes_mutex_);
    const auto nodes = live_nodes();
    for (auto& n : nodes) {
      const std::string fq = n->get_fully_qualified_name();
      if (std::find(node_order.begin(), node_order.end(), fq) == node_order.end()) node_order.push_back(fq);
      const auto def = n->get_default_callback_group();
      n->for_each_callback_group([&](const ::rclcpp::CallbackGroup::SharedPtr& g) {
        if (g != def) group_names[g.get()] = std::to_string(reinterpret_cast<std::uintptr_t>(g.get()));
      });
    }
  }
  std::vector<EntityView> views = entity_views();
  auto node_ix = [&](const std::string& fq) {
    return std::find(node_order.begin(), node_order.end(), fq) - node_order.begin();
  };
  std::stable_sort(views.begin(), views.end(), [&](const EntityView& a, const EntityView& b) {
    const auto na = node_ix(a.fq_node), nb = node_ix(b.fq_node);
    return na != nb ? na < nb : kind_rank(a.kind) < kind_rank(b.kind);
  });
  const Marks* mk = marks_.get();
  for (const auto& v : views) {
    runtime::CodeEntity e;
    e.node = strip_slash(v.fq_node);
    e.kind = v.kind;
    e.period = v.period;
    e.topic = v.topic;
    if (auto g = group_names.find(v.group); g != group_names.end()) e.group = g->second;
    e.reentrant = v.reentrant;
    if (file_model_ && !v.model_name.empty() &&
        std::any_of(file_model_->callbacks.begin(), file_model_->callbacks.end(),
                    [&](const Callback& c) { return c.name == v.model_name; }))
      e.bound = v.model_name;
    e.measured = v.cpu_max;
    for (const auto& [key, m] : mk ? mk->callbacks : decltype(mk->callbacks){})
      if (key == v.key) {
        e.marked = true;
        e.name = m.name;
        e.priority = m.priority;
        e.wcet = m.wcet.count();
      }
    for (const auto& [g, t] : mk ? mk->groups : decltype(mk->groups){})
      if (g == v.group) {
        e.marked = true;
        e.thread = t.name;
      }
    keys.push_back(v.key);
    in.entities.push_back(std::move(e));
  }
  for (const auto& [g, t] : mk ? mk->groups : decltype(mk->groups){})
    if (std::none_of(in.threads.begin(), in.threads.end(), [&](auto& x) { return x.name == t.name; }))
      in.threads.push_back(runtime::CodeThread{t.name, t.cores, t.fifo_priority});
  for (const auto& c : mk ? mk->chains : decltype(mk->chains){}) {
    runtime::CodeChain ch;
    ch.name = c.name;
    for (const void* key : c.keys) {
      auto it = std::find(keys.begin(), keys.end(), key);
      if (it == keys.end())
        throw std::invalid_argument("add_chain('" + c.name + "'): a callback of a node not added to this executor");
      ch.entities.push_back(static_cast<std::size_t>(it - keys.begin()));
    }
    ch.period = c.mark.period.count();
    ch.deadline = c.mark.deadline.count();
    ch.criticality_class = c.mark.criticality_class;
    ch.criticality = c.mark.criticality;
    ch.priority = c.mark.priority;
    in.chains.push_back(std::move(ch));
  }
  in.executor = file_model_ ? (binder_ ? binder_->executor_name()
                                       : !options_.executor.empty() ? options_.executor : file_model_->executors.front().name)
                            : options_.executor;
  in.policy = options_.policy.value_or(Policy::RosDefault);
  in.plain_threads = options_.threads.value_or(1);
  in.host_cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  return in;
}

// The model of the marks replaces the executor's model (the file's, or none) and every entity is
// bound again: to the callback the marks' model names for it.
void ChainExecutor::apply_marks() {
  if (rebuild_requested_.load() || !tables_) rebuild();
  std::vector<const void*> keys;
  runtime::CodeMarks in;
  {
    std::lock_guard<std::mutex> rl(rebuild_mutex_);
    in = gather(keys);
    if (in.entities.empty()) return;  // no node yet: the marks wait for the next spin*()
  }
  runtime::CodeModel cm = runtime::model_from_code(in, file_model_.get());
  {
    std::lock_guard<std::mutex> rl(rebuild_mutex_);
    code_names_.clear();
    for (std::size_t i = 0; i < keys.size(); ++i)
      if (!cm.names[i].empty()) code_names_.emplace_back(keys[i], cm.names[i]);
    marks_->notes = cm.notes;
    marks_->dirty = false;
    const std::string executor = in.executor.empty() ? cm.model.executors.front().name : in.executor;
    adopt_model(std::make_unique<Model>(std::move(cm.model)), executor);
    std::unique_lock<runtime::PiMutex> lk(mutex_);
    for (auto& n : marks_->notes) warnings_.push_back("marks in code: " + n);
  }
  rebuild_requested_.store(true);
  rebuild();
}

// The model the executor runs by, with a WCET for every callback (model_yaml, save_model).
Model ChainExecutor::current_model() {
  if (spinning.load()) throw std::logic_error("chainrt::rclcpp::ChainExecutor: model_yaml()/save_model() while it spins");
  if (rebuild_requested_.load() || !tables_) rebuild();
  if (!marks_ && model_) return *model_;  // the model file (or LaME's plan of it)
  std::vector<const void*> keys;
  runtime::CodeMarks in;
  {
    std::lock_guard<std::mutex> rl(rebuild_mutex_);
    in = gather(keys);
  }
  return runtime::model_from_code(in, file_model_.get(), true).model;
}

std::string ChainExecutor::model_yaml() { return save_model_to_string(current_model()); }
void ChainExecutor::save_model(const std::string& path) { chainrt::save_model(current_model(), path); }

}  // namespace chainrt::rclcpp
