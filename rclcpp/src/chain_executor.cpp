// chainrt rclcpp: the ChainExecutor (see chain_executor.hpp for the design and the papers).
#include "chainrt/rclcpp/chain_executor.hpp"

#include <rcl/error_handling.h>
#include <rcl/timer.h>
#include <rcl/wait.h>
#include <rclcpp/callback_group.hpp>
#include <rclcpp/client.hpp>
#include <rclcpp/event_handler.hpp>
#include <rclcpp/experimental/subscription_intra_process_base.hpp>
#include <rclcpp/node.hpp>
#include <rclcpp/service.hpp>
#include <rclcpp/subscription_base.hpp>
#include <rclcpp/timer.hpp>
#include <rclcpp/waitable.hpp>
#include <sched.h>
#include <std_msgs/msg/string.hpp>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <map>
#include <stdexcept>
#include <unordered_map>

#include "chainrt/model/yaml_io.hpp"
#include "chainrt/runtime/chain_track.hpp"
#include "chainrt/runtime/dispatch_context.hpp"
#include "chainrt/runtime/entity_binding.hpp"
#include "chainrt/runtime/monitor_msg.hpp"
#if defined(CHAINRT_HAVE_LAME)
#include "chainrt/runtime/lame_controller.hpp"
#endif

namespace chainrt::rclcpp {

using runtime::kNoChain;
using runtime::Stamp;
using sched::CallbackId;
using sched::kNoCallback;
using sched::kNoDeadline;

namespace {

enum class Kind : std::uint8_t { Timer, Subscription, Service, Client, Waitable };

constexpr Duration kRclTimerCheck = 100'000'000;  // rcl-timed timers are read at least this often
constexpr std::size_t kWaitableIds = 8;           // waitable entity ids counted one by one

Duration mono_ns() noexcept { return runtime::now_ns(); }

// rclcpp's own per-node entities, which run like every entity but are never listed as
// unmatched (the one place that knows them): the parameter and type-description services of
// every node, and on rclcpp 28 the TimeSource's /parameter_events subscription
// (CHAINRT_RCLCPP_TIME_SOURCE_SUBSCRIBES_PARAMETER_EVENTS, ros_compat.hpp). The latter is told
// from a user's own subscription to that topic as the node's first one, in its default group:
// the node's constructor creates it before any user entity.
bool rclcpp_own_service(const std::string& node_fqn, const std::string& service) {
  static const char* const kNames[] = {"describe_parameters", "get_parameters", "get_parameter_types",
                                       "list_parameters", "set_parameters", "set_parameters_atomically",
                                       "get_type_description"};
  const std::string base = (node_fqn == "/" ? std::string() : node_fqn) + "/";
  if (service.rfind(base, 0) != 0) return false;
  const std::string rest = service.substr(base.size());
  for (const char* n : kNames)
    if (rest == n) return true;
  return false;
}

// `first_of_node`: no earlier subscription of the node to this topic was found.
bool rclcpp_own_subscription([[maybe_unused]] const std::string& topic, [[maybe_unused]] bool default_group,
                             [[maybe_unused]] bool first_of_node) {
#if CHAINRT_RCLCPP_TIME_SOURCE_SUBSCRIBES_PARAMETER_EVENTS
  return topic == "/parameter_events" && default_group && first_of_node;
#else
  return false;
#endif
}

struct ScopeExit {
  std::function<void()> fn;
  ~ScopeExit() { fn(); }
};

}  // namespace

// A chain-relevant model callback (persists across rebuilds; all slots bound to it share it:
// an intra-process subscription and its rcl subscription are one model callback).
struct ChainExecutor::ModelCb {
  std::uint32_t timer_chain = kNoChain;    // the chain a timer starts (the tightest deadline)
  Duration timer_rel_deadline = kNoDeadline;
  std::uint64_t instance = 0;
  std::vector<std::pair<std::size_t, std::uint32_t>> successors;  // (model id, chain)
  std::vector<std::uint32_t> leaf_of;
  runtime::StampRing inputs;  // instances handed over by chain predecessors in this executor
};

// Run-time state of one entity. Created when the entity first appears; kept (id = kNoCallback)
// after it is removed, so that pointers held by event callbacks and running dispatches stay valid.
struct ChainExecutor::Slot {
  // What every dispatch and event touches, together (a fan-out of many subscriptions runs them
  // back to back with the DDS layer's data in between: the fewer cache lines, the better).
  ChainExecutor* ex = nullptr;
  std::uint32_t mon = 0;                   // monitor id: slot creation order, never reused
  CallbackId id = kNoCallback;             // in the current tables; kNoCallback: removed
  Kind kind = Kind::Subscription;
  bool reentrant = false;
  bool released = false;                   // (lock) timers: a release waits or is queued
  std::uint32_t running = 0;
  std::atomic<std::int64_t> pending{0};    // events not yet taken
  std::int64_t depth = 0;                  // queue depth (keep-last): more events are drops
  std::atomic<bool> enlisted{false};
  Slot* next_dirty = nullptr;
  ModelCb* mcb = nullptr;
  std::weak_ptr<::rclcpp::SubscriptionBase> sub;
  std::atomic<bool> poll{false};           // a waitable's timer is due: it polls itself
  runtime::CpuWindow window;
  runtime::CallbackStats stats;
  const void* key = nullptr;               // the entity's address
  const void* group_key = nullptr;
  std::weak_ptr<::rclcpp::TimerBase> timer;
  std::weak_ptr<::rclcpp::ServiceBase> srv;
  std::weak_ptr<::rclcpp::ClientBase> cli;
  std::weak_ptr<::rclcpp::Waitable> wt;
  // timers
  std::shared_ptr<const rcl_timer_t> handle;
  bool steady = false;
  sched::TimerClock clock;                 // steady timers: released by the shared rule
  Duration release_steady = 0;             // rcl-timed timers: the release on the executor's clock
  std::atomic<bool> reset{false};          // the timer was reset: re-arm from rcl
  std::vector<std::shared_ptr<rcl_timer_call_info_t>> info;  // per executor thread
  // waitables with timers (an action server's goal expiry): polled through a wait set
  std::vector<std::shared_ptr<const rcl_timer_t>> wt_timers;
  std::unique_ptr<rcl_wait_set_t> ws;
  std::atomic<bool> polling{false};
  // events
  std::array<std::atomic<std::int32_t>, kWaitableIds> wdata{};  // waitable events per entity id
  std::atomic<std::int32_t> wother{0};     // ... with an id >= kWaitableIds (take_data())
  std::atomic<std::uint64_t> event_drops{0};
  // model
  std::optional<std::size_t> model_id;
  bool listed = true;                      // listed as unmatched when the model lacks it
  std::string bind_node;                   // its node's name (binding)
  bool ipc = false;                        // an intra-process subscription
  bool stale = false;                      // to be bound again (bind())
};

struct ChainExecutor::Tables {
  std::vector<Slot*> slots;                // by CallbackId
  std::vector<sched::GroupSpec> groups;
  std::vector<const void*> group_keys;
  std::unique_ptr<sched::ReadyQueue> queue;
  std::unique_ptr<sched::Admission> admission;
  std::vector<Slot*> steady_timers;
  std::vector<Slot*> rcl_timed;            // timers on ROS/system time, waitables with timers
  std::vector<std::string> unmatched;
  std::vector<std::string> unused;
};

struct ChainExecutor::Bound {
  std::vector<ModelCb> cbs;                // by model id
  std::vector<runtime::ChainTrack> chains; // by model chain index
};

// sched::Admission's view of the slots.
struct ChainExecutor::AdmissionSource {
  const ChainExecutor* ex;
  bool ready(CallbackId id) const noexcept {
    const Slot& s = *ex->tables_->slots[id];
    if (s.kind == Kind::Timer) return s.released;
    return s.pending.load(std::memory_order_relaxed) > 0 || s.poll.load(std::memory_order_relaxed);
  }
  Duration deadline(CallbackId id) const noexcept { return ex->ready_deadline(*ex->tables_->slots[id]); }
};

ChainExecutor::ChainExecutor() : ChainExecutor(ChainExecutorOptions{}) {}

ChainExecutor::ChainExecutor(const std::string& model_file, ChainExecutorOptions options)
    : ChainExecutor([&] {
        options.model_file = model_file;
        return std::move(options);
      }()) {}

ChainExecutor::ChainExecutor(ChainExecutorOptions options)
    : ::rclcpp::Executor(options.executor_options), options_(std::move(options)) {
  init();
}

void ChainExecutor::init() {
  if (options_.threads && (*options_.threads < 1 || *options_.threads > 64))
    throw std::invalid_argument("threads must be 1..64");
  if (!options_.model_file.empty() || !options_.model_yaml.empty()) {
    model_text_ = options_.model_yaml;
    model_origin_ = options_.model_file.empty() ? std::string("<model>") : options_.model_file;
    // Parsed now so that a bad file fails at construction; bound when the first node is known.
    Model m = options_.model_file.empty() ? load_model_from_string(model_text_, model_origin_)
                                          : load_model(options_.model_file);
    model_ = std::make_unique<Model>(std::move(m));
    file_model_ = std::make_unique<Model>(*model_);  // marks in code are built on it
  }
  if (options_.lame_controller > 0) {
#if defined(CHAINRT_HAVE_LAME)
    if (!model_) throw std::invalid_argument("the LaME controller needs a model (the chains to plan)");
    if (options_.policy && *options_.policy != Policy::Lame)
      throw std::invalid_argument("the LaME controller runs the lame policy");
    runtime::LameControllerOptions lo;
    lo.period = options_.lame_controller;
    lo.plan.period = options_.lame_reservation_period;
    lo.capacity_permille = options_.lame_capacity_permille;
    lo.log_stderr = options_.lame_log;
    lame_ = std::make_unique<runtime::LameController>(*model_, lo);
    lame_->set_run_id(options_.run_id.empty() ? "rclcpp-" + std::to_string(getpid()) : options_.run_id);
    // the executor runs the plan: its model, its executor, its thread slots
    *model_ = lame_->planned_model();
    options_.executor = lame_->executor_name();
    options_.policy = Policy::Lame;
    options_.threads.reset();
#else
    throw std::invalid_argument("this build of chainrt has no LaME controller (lame/ was not built)");
#endif
  }
  if (options_.run_id.empty()) options_.run_id = "rclcpp-" + std::to_string(getpid());
  trace_.reserve(options_.trace_capacity);
  policy_ = options_.policy.value_or(Policy::RosDefault);
  const int n = options_.threads.value_or(1);
  for (int i = 0; i < n; ++i) {
    sched::ThreadSpec ts;
    ts.name = "t" + std::to_string(i);
    threads_spec_.push_back(ts);
  }
  // A model with one executor (or a named one) is bound now; else at the first rebuild that
  // knows a node the model has.
  if (model_ && (model_->executors.size() == 1 || !options_.executor.empty())) bind_model({});
  running_.assign(threads_spec_.size(), Running{});
  tids_ = std::vector<std::atomic<int>>(threads_spec_.size());
  bound_ = std::make_unique<Bound>();
  if (binder_) init_chains();
  // The notify waitable carries the guard conditions of the nodes and groups (entities added or
  // removed), cancel()'s and the context's shutdown: any of them makes the executor look again.
  notify_waitable_->set_on_ready_callback([this](std::size_t, int) {
    rebuild_requested_.store(true, std::memory_order_release);
    wake_others();
  });
}

// The model's executor (by name, or the one of the first node the model has) with its policy and
// threads; chains are bound in init_chains().
void ChainExecutor::bind_model(const std::vector<std::string>& node_names) {
  binder_ = std::make_unique<runtime::EntityBinder>(*model_, options_.executor, node_names, options_.policy,
                                                    options_.threads);
  const sched::ExecutorSetup& setup = binder_->setup();
  policy_ = options_.policy.value_or(setup.policy);
  threads_spec_ = setup.threads;
#if defined(CHAINRT_HAVE_LAME)
  if (lame_) threads_spec_ = lame_->slot_threads();
#endif
  if (threads_spec_.size() > sched::kMaxThreads) throw std::invalid_argument("an executor has at most 64 threads");
}

void ChainExecutor::init_chains() {
  const Model& m = binder_->model();
  Bound& b = *bound_;
  b.cbs.resize(binder_->size());
  for (auto& c : b.cbs) c.inputs.reserve(64);
  auto model_id = [&](const std::string& name) -> std::optional<std::size_t> {
    for (std::size_t i = 0; i < binder_->size(); ++i)
      if (binder_->callback(i).name == name) return i;
    return std::nullopt;
  };
  b.chains.resize(m.chains.size());
  for (std::uint32_t c = 0; c < m.chains.size(); ++c) {
    const Chain& ch = m.chains[c];
    runtime::ChainTrack& t = b.chains[c];
    t.name = ch.name;
    t.period = ch.period;
    t.deadline = ch.deadline;
    for (const auto& n : ch.callbacks)
      if (auto id = model_id(n)) t.members.push_back(static_cast<CallbackId>(*id));
    if (!ch.callbacks.empty()) {
      t.source_name = ch.callbacks.front();
      if (auto id = model_id(ch.callbacks.front())) t.source = static_cast<CallbackId>(*id);
    }
    for (const auto& path : ch.paths()) {
      if (path.empty()) continue;
      for (std::size_t k = 0; k + 1 < path.size(); ++k) {
        auto a = model_id(path[k]), z = model_id(path[k + 1]);
        if (!a || !z) continue;
        auto& succ = b.cbs[*a].successors;
        const std::pair<std::size_t, std::uint32_t> e{*z, c};
        if (std::find(succ.begin(), succ.end(), e) == succ.end()) succ.push_back(e);
      }
      if (auto leaf = model_id(path.back())) {
        auto& lo = b.cbs[*leaf].leaf_of;
        if (std::find(lo.begin(), lo.end(), c) == lo.end()) {
          lo.push_back(c);
          t.leaves.push_back(static_cast<CallbackId>(*leaf));
        }
      }
    }
    t.reserve(options_.samples_per_chain);
    if (t.source != kNoCallback && binder_->callback(t.source).kind == CallbackKind::Timer) {
      ModelCb& src = b.cbs[t.source];
      runtime::choose_source_chain(src.timer_chain, src.timer_rel_deadline, c, ch.deadline);
    }
  }
}

ChainExecutor::~ChainExecutor() {
  spinning.store(false);
  wake_others();
  for (auto& th : helpers_)
    if (th.joinable()) th.join();
  stop_stats();
  notify_waitable_->clear_on_ready_callback();
  std::lock_guard<std::mutex> rl(rebuild_mutex_);
  for (auto& s : all_slots_)
    if (s->id != kNoCallback) uninstall(*s);
  for (auto& s : all_slots_)
    if (s->ws) {
      rcl_ret_t r = rcl_wait_set_fini(s->ws.get());
      (void)r;
      rcl_reset_error();
    }
}

Duration ChainExecutor::clock_now() const noexcept { return options_.clock ? options_.clock() : mono_ns(); }

// ---- nodes and groups (rclcpp's collector does the bookkeeping; we remember names and order) ----

void ChainExecutor::add_node(::rclcpp::node_interfaces::NodeBaseInterface::SharedPtr node, bool notify) {
  {
    std::lock_guard<std::mutex> lk(nodes_mutex_);
    nodes_.push_back(node);
  }
  ::rclcpp::Executor::add_node(node, notify);
#if !CHAINRT_RCLCPP_VIRTUAL_HANDLE_UPDATED_ENTITIES
  handle_updated_entities(notify);
#endif
}

void ChainExecutor::add_callback_group(::rclcpp::CallbackGroup::SharedPtr group,
                                       ::rclcpp::node_interfaces::NodeBaseInterface::SharedPtr node, bool notify) {
  if (node) {
    std::lock_guard<std::mutex> lk(nodes_mutex_);
    group_nodes_.emplace_back(group, node);
  }
  ::rclcpp::Executor::add_callback_group(group, node, notify);
#if !CHAINRT_RCLCPP_VIRTUAL_HANDLE_UPDATED_ENTITIES
  handle_updated_entities(notify);
#endif
}

#if !CHAINRT_RCLCPP_VIRTUAL_HANDLE_UPDATED_ENTITIES
void ChainExecutor::remove_node(::rclcpp::node_interfaces::NodeBaseInterface::SharedPtr node, bool notify) {
  ::rclcpp::Executor::remove_node(node, notify);
  handle_updated_entities(notify);
}

void ChainExecutor::remove_callback_group(::rclcpp::CallbackGroup::SharedPtr group, bool notify) {
  ::rclcpp::Executor::remove_callback_group(group, notify);
  handle_updated_entities(notify);
}
#endif

void ChainExecutor::handle_updated_entities(bool notify) {
  rebuild_requested_.store(true, std::memory_order_release);
  if (!spinning.load()) rebuild();
  if (notify) wake_others();
}

// An entity is known by its slot key: the rcl handle of a timer, subscription, service or
// client, the object itself for a waitable (what rebuild() keys slots by).
void ChainExecutor::bind(const std::string& model_callback, const ::rclcpp::TimerBase::SharedPtr& timer) {
  bind_key(model_callback, timer ? timer->get_timer_handle().get() : nullptr);
}
void ChainExecutor::bind(const std::string& model_callback, const ::rclcpp::SubscriptionBase::SharedPtr& subscription) {
  bind_key(model_callback, subscription ? subscription->get_subscription_handle().get() : nullptr);
}
void ChainExecutor::bind(const std::string& model_callback, const ::rclcpp::ServiceBase::SharedPtr& service) {
  bind_key(model_callback, service ? service->get_service_handle().get() : nullptr);
}
void ChainExecutor::bind(const std::string& model_callback, const ::rclcpp::ClientBase::SharedPtr& client) {
  bind_key(model_callback, client ? client->get_client_handle().get() : nullptr);
}
void ChainExecutor::bind(const std::string& model_callback, const ::rclcpp::Waitable::SharedPtr& waitable) {
  bind_key(model_callback, waitable.get());
}

void ChainExecutor::bind_key(const std::string& model_callback, const void* entity) {
  if (!entity) throw std::invalid_argument("bind('" + model_callback + "'): no entity (a null pointer)");
  {
    std::lock_guard<std::mutex> rl(rebuild_mutex_);
    explicit_.emplace_back(model_callback, entity);
    for (auto& s : all_slots_)  // an entity bound already is bound again
      if (s->key == entity) s->model_id.reset(), s->stale = true;
  }
  rebuild_requested_.store(true);
  if (!spinning.load()) rebuild();
  wake_others();
}

void ChainExecutor::start_checks() {
  if (marks_pending()) apply_marks();
  if (rebuild_requested_.load() || !tables_) rebuild();
  if (options_.allow_unbound || !unbound_.load(std::memory_order_acquire)) return;
  {
    std::lock_guard<std::mutex> lk(nodes_mutex_);
    const bool any_node = std::any_of(nodes_.begin(), nodes_.end(), [](auto& w) { return !w.expired(); }) ||
                          std::any_of(group_nodes_.begin(), group_nodes_.end(), [](auto& g) { return !g.second.expired(); });
    if (!any_node) return;  // nothing to bind yet
  }
  std::lock_guard<std::mutex> rl(rebuild_mutex_);
  if (!binder_ || binder_->unused().empty()) return;
  throw UnboundModelCallbacks(
      "chainrt::rclcpp::ChainExecutor: model callbacks of executor '" + binder_->executor_name() +
      "' without a real counterpart (a model that does not describe these nodes would be monitored and "
      "scheduled wrongly; ChainExecutorOptions::allow_unbound runs anyway):\n" + binder_->explain_unused());
}

// ---- rebuilding the tables -------------------------------------------------------------------

bool ChainExecutor::rebuild() {
  std::unique_lock<std::mutex> rl(rebuild_mutex_, std::try_to_lock);
  if (!rl.owns_lock()) return false;  // another thread rebuilds
  rebuild_requested_.store(false, std::memory_order_release);

  // What rclcpp says belongs to this executor, with the node of every group.
  collector_.update_collections();
  std::vector<::rclcpp::CallbackGroup::WeakPtr> weak_groups = collector_.get_all_callback_groups();
  std::vector<::rclcpp::CallbackGroup::SharedPtr> groups;
  for (auto& w : weak_groups)
    if (auto g = w.lock()) groups.push_back(g);
  struct Found {
    ::rclcpp::CallbackGroup::SharedPtr group;
    ::rclcpp::node_interfaces::NodeBaseInterface::SharedPtr node;
  };
  std::vector<Found> ordered;  // nodes in the order added, their groups in creation order
  {
    std::lock_guard<std::mutex> lk(nodes_mutex_);
    const auto nodes = live_nodes();
    for (auto& n : nodes)
      n->for_each_callback_group([&](const ::rclcpp::CallbackGroup::SharedPtr& g) {
        if (std::find(groups.begin(), groups.end(), g) == groups.end()) return;
        for (auto& f : ordered)
          if (f.group == g) return;
        ordered.push_back(Found{g, n});
      });
  }
  for (auto& g : groups) {  // groups of nodes not added through this executor's add_node
    bool known = false;
    for (auto& f : ordered) known = known || f.group == g;
    if (!known) ordered.push_back(Found{g, nullptr});
  }
  std::vector<std::string> notes;  // warnings of this rebuild
  bool rebind = false;
  if (model_ && !binder_) {  // bind to the model executor of the first node the model has
    std::vector<std::string> names;
    for (auto& f : ordered)
      if (f.node) names.push_back(f.node->get_name());
    bool hosted = false;
    for (const auto& n : names)
      for (const auto& mn : model_->nodes) hosted = hosted || mn.name == n;
    if (hosted) {
      const std::size_t threads_before = threads_spec_.size();
      const auto spec_before = threads_spec_;
      bind_model(names);
      if (spinning.load() && threads_spec_.size() != threads_before) {
        notes.push_back("the model executor '" + binder_->executor_name() +
                        "' was bound while spinning: its threads apply from the next spin()");
        threads_spec_ = spec_before;
      }
      bound_ = std::make_unique<Bound>();
      init_chains();
      if (!spinning.load()) {
        std::unique_lock<runtime::PiMutex> lk(mutex_);
        running_.assign(threads_spec_.size(), Running{});
        tids_ = std::vector<std::atomic<int>>(threads_spec_.size());
      }
      rebind = true;  // entities seen before the model was bound are bound now
    }
  }

  // Existing slots by entity; new ones made (not visible to the dispatch path yet).
  std::unordered_map<const void*, Slot*> by_key;
  for (auto& s : all_slots_)
    if (s->id != kNoCallback) by_key[s->key] = s.get();
  std::vector<Slot*> live;
  std::vector<Slot*> created;
  std::vector<std::unique_ptr<Slot>> made;  // joins all_slots_ under the lock
  auto slot_for = [&](const void* key, Kind kind, const auto& entity, const Found& f) -> Slot* {
    auto it = by_key.find(key);
    if (it != by_key.end()) {
      Slot* s = it->second;
      bool same = false;
      switch (s->kind) {
        case Kind::Timer: same = s->timer.lock().get() == static_cast<const void*>(entity.get()); break;
        case Kind::Subscription: same = s->sub.lock().get() == static_cast<const void*>(entity.get()); break;
        case Kind::Service: same = s->srv.lock().get() == static_cast<const void*>(entity.get()); break;
        case Kind::Client: same = s->cli.lock().get() == static_cast<const void*>(entity.get()); break;
        case Kind::Waitable: same = s->wt.lock().get() == static_cast<const void*>(entity.get()); break;
      }
      if (same && s->kind == kind && s->group_key == f.group.get() && !s->stale && !rebind) {
        live.push_back(s);
        return nullptr;
      }
    }
    auto sp = std::make_unique<Slot>();
    Slot* s = sp.get();
    s->ex = this;
    s->kind = kind;
    s->key = key;
    s->group_key = f.group.get();
    s->reentrant = f.group->type() == ::rclcpp::CallbackGroupType::Reentrant;
    made.push_back(std::move(sp));
    live.push_back(s);
    created.push_back(s);
    return s;
  };

  const std::size_t nthreads = threads_spec_.size();
  // "<node>/<label>", "#k" for the k-th of that name (names are never reused in one executor)
  auto name_slot = [&](Slot* s, const Found& f, const std::string& label) {
    const std::string node = f.node ? f.node->get_name() : std::string("?");
    const std::string base = node + "/" + label;
    std::size_t k = 0;
    auto same = [&](const Slot& o) { return &o != s && (o.stats.name == base || o.stats.name.rfind(base + "#", 0) == 0); };
    for (auto& o : all_slots_) k += same(*o);
    for (auto& o : made) k += same(*o);
    s->stats.name = k == 0 ? base : base + "#" + std::to_string(k);
  };
  auto node_of = [](const Found& f) { return f.node ? std::string(f.node->get_name()) : std::string(); };
  auto fqn_of = [](const Found& f) { return f.node ? std::string(f.node->get_fully_qualified_name()) : std::string(); };

  for (const Found& f : ordered) {
    f.group->collect_all_ptrs(
        [&](const ::rclcpp::SubscriptionBase::SharedPtr& sub) {
          Slot* s = slot_for(sub->get_subscription_handle().get(), Kind::Subscription, sub, f);
          if (!s) return;
          s->sub = sub;
          s->stats.kind = "subscription";
          s->stats.topic = sub->get_topic_name();
          s->stats.node = fqn_of(f);
          s->depth = static_cast<std::int64_t>(sub->get_actual_qos().depth());
          s->bind_node = node_of(f);
          // another live subscription of this node to this topic, found before (a slot made
          // again for the same entity, on a rebind, is not another)
          auto earlier = [&](const Slot& o) {
            const auto e = o.sub.lock();
            return &o != s && o.kind == Kind::Subscription && !o.ipc && e && e != sub &&
                   o.stats.node == s->stats.node && o.stats.topic == s->stats.topic;
          };
          const bool first =
              std::none_of(all_slots_.begin(), all_slots_.end(), [&](auto& o) { return o->id != kNoCallback && earlier(*o); }) &&
              std::none_of(made.begin(), made.end(), [&](auto& o) { return earlier(*o); });
          const bool default_group = f.node && f.group == f.node->get_default_callback_group();
          s->listed = !rclcpp_own_subscription(s->stats.topic, default_group, first);
          // rclcpp's own subscription is named apart, so that a user's own subscription to the
          // topic keeps the plain name on every line
          name_slot(s, f, s->listed ? runtime::entity_label(CallbackKind::Subscription, 0, s->stats.topic)
                                    : "time_source:" + s->stats.topic);
        },
        [&](const ::rclcpp::ServiceBase::SharedPtr& srv) {
          Slot* s = slot_for(srv->get_service_handle().get(), Kind::Service, srv, f);
          if (!s) return;
          s->srv = srv;
          s->stats.kind = "service";
          s->stats.topic = srv->get_service_name();
          s->stats.node = fqn_of(f);
          name_slot(s, f, runtime::entity_label(CallbackKind::Service, 0, s->stats.topic));
          s->bind_node = node_of(f);
          s->listed = !rclcpp_own_service(s->stats.node, s->stats.topic);
        },
        [&](const ::rclcpp::ClientBase::SharedPtr& cli) {
          Slot* s = slot_for(cli->get_client_handle().get(), Kind::Client, cli, f);
          if (!s) return;
          s->cli = cli;
          s->stats.kind = "client";
          s->stats.topic = cli->get_service_name();
          s->stats.node = fqn_of(f);
          name_slot(s, f, runtime::entity_label(CallbackKind::Client, 0, s->stats.topic));
          s->bind_node = node_of(f);
        },
        [&](const ::rclcpp::TimerBase::SharedPtr& tm) {
          Slot* s = slot_for(tm->get_timer_handle().get(), Kind::Timer, tm, f);
          if (!s) return;
          s->timer = tm;
          s->handle = tm->get_timer_handle();
          s->steady = tm->is_steady();
          std::int64_t period = 0;
          if (rcl_timer_get_period(s->handle.get(), &period) != RCL_RET_OK) rcl_reset_error();
          s->clock.period = period;
          s->stats.kind = "timer";
          s->stats.node = fqn_of(f);
          name_slot(s, f, runtime::entity_label(CallbackKind::Timer, period, ""));
          s->bind_node = node_of(f);
          for (std::size_t t = 0; t < nthreads; ++t) s->info.push_back(std::make_shared<rcl_timer_call_info_t>());
        },
        [&](const ::rclcpp::Waitable::SharedPtr& w) {
          Slot* s = slot_for(w.get(), Kind::Waitable, w, f);
          if (!s) return;
          s->wt = w;
          s->stats.node = fqn_of(f);
          s->bind_node = node_of(f);
          if (auto* ipc = dynamic_cast<::rclcpp::experimental::SubscriptionIntraProcessBase*>(w.get())) {
            s->stats.kind = "subscription";
            s->stats.topic = ipc->get_topic_name();
            s->ipc = true;
            s->listed = false;  // listed through its subscription
            name_slot(s, f, "ipc:" + s->stats.topic);
          } else if (dynamic_cast<::rclcpp::EventHandlerBase*>(w.get())) {
            s->stats.kind = "event";
            s->listed = false;
            name_slot(s, f, "qos_event");
          } else {
            s->stats.kind = "waitable";
            name_slot(s, f, "waitable");
          }
#if CHAINRT_RCLCPP_WAITABLE_GET_TIMERS
          for (auto& tm : w->get_timers())
            if (tm) s->wt_timers.push_back(tm->get_timer_handle());
#endif
        });
  }

  // Bind new slots to the model: explicit bindings, then the rule; an intra-process
  // subscription is the model callback of its subscription.
  if (binder_) {
    // what the rule sees of a slot (rclcpp's own entities, never listed, are no model callback)
    auto real_of = [](const Slot* s) -> std::optional<runtime::RealEntity> {
      if (s->kind == Kind::Waitable || !s->listed) return std::nullopt;
      const CallbackKind k = s->kind == Kind::Timer ? CallbackKind::Timer
                           : s->kind == Kind::Service ? CallbackKind::Service
                           : s->kind == Kind::Client ? CallbackKind::Client : CallbackKind::Subscription;
      const std::size_t ns = std::min(s->stats.node.find_first_not_of('/'), s->stats.node.size());
      return runtime::RealEntity{s->stats.node.substr(ns), s->bind_node, k, s->clock.period, s->stats.topic};
    };
    binder_->reset();
    for (Slot* s : live)
      if (std::find(created.begin(), created.end(), s) == created.end()) {
        if (s->model_id) binder_->by_name(binder_->callback(*s->model_id).name);
        if (auto e = real_of(s)) binder_->see(*e);
      }
    for (Slot* s : created)
      for (auto& [name, key] : explicit_)
        if (key == s->key) {
          s->model_id = binder_->by_name(name);
          if (!s->model_id) notes.push_back("bind(): the model has no callback '" + name + "'");
          if (auto e = real_of(s)) binder_->see(*e);
        }
    for (Slot* s : created)  // the model of marks in code names each entity it has
      for (auto& [key, name] : code_names_)
        if (key == s->key && !s->model_id) {
          s->model_id = binder_->by_name(name);
          if (auto e = real_of(s)) binder_->see(*e);
        }
    for (Slot* s : created)
      if (auto e = real_of(s); e && !s->model_id) s->model_id = binder_->match(*e);
    for (Slot* s : created)
      if (s->ipc && !s->model_id)
        for (Slot* o : live)
          if (o->kind == Kind::Subscription && o->model_id && o->bind_node == s->bind_node &&
              o->stats.topic == s->stats.topic)
            s->model_id = o->model_id;
    for (Slot* s : created)
      if (s->model_id) {
        const std::string name = binder_->callback(*s->model_id).name;
        s->stats.name = s->ipc ? name + "@ipc" : name;
        s->mcb = &bound_->cbs[*s->model_id];
      }
  }

  // The new tables: bound callbacks in model order (the simulator's registration order), then
  // the others in the order found.
  auto T = std::make_unique<Tables>();
  std::vector<Slot*> order = live;
  std::stable_sort(order.begin(), order.end(), [](const Slot* a, const Slot* b) {
    const std::size_t ka = a->model_id ? *a->model_id : SIZE_MAX, kb = b->model_id ? *b->model_id : SIZE_MAX;
    return ka < kb;
  });
  std::vector<sched::CallbackSpec> specs;
  const sched::AffinityMask all = nthreads >= 64 ? sched::kAnyThread : ((sched::AffinityMask{1} << nthreads) - 1);
  for (Slot* s : order) {
    sched::CallbackSpec spec;
    spec.kind = s->kind == Kind::Timer ? CallbackKind::Timer
              : s->kind == Kind::Service ? CallbackKind::Service
              : s->kind == Kind::Client ? CallbackKind::Client
              : (s->kind == Kind::Waitable && !s->ipc) ? CallbackKind::Client : CallbackKind::Subscription;
    auto g = std::find(T->group_keys.begin(), T->group_keys.end(), s->group_key);
    if (g == T->group_keys.end()) {
      T->group_keys.push_back(s->group_key);
      T->groups.push_back(sched::GroupSpec{s->reentrant ? GroupType::Reentrant : GroupType::MutuallyExclusive});
      spec.group = static_cast<sched::GroupId>(T->groups.size() - 1);
    } else {
      spec.group = static_cast<sched::GroupId>(g - T->group_keys.begin());
    }
    if (s->model_id) {
      const sched::CallbackSpec& ms = binder_->setup().specs[*s->model_id];
      spec.priority = ms.priority;
      spec.affinity = (ms.affinity & all) ? ms.affinity : sched::kAnyThread;
      if (*s->model_id < lame_params_.size() && lame_params_[*s->model_id]) {  // LaME's decision
        spec.priority = lame_params_[*s->model_id]->first;
        spec.affinity = (lame_params_[*s->model_id]->second & all) ? lame_params_[*s->model_id]->second : sched::kAnyThread;
      }
    }
    specs.push_back(spec);
    T->slots.push_back(s);
    if (s->kind == Kind::Timer) (s->steady ? T->steady_timers : T->rcl_timed).push_back(s);
    if (s->kind == Kind::Waitable && !s->wt_timers.empty()) T->rcl_timed.push_back(s);
    if (!s->model_id && s->listed && binder_) T->unmatched.push_back(s->stats.name);
  }
  if (binder_) T->unused = binder_->unused();
  unbound_.store(!T->unused.empty(), std::memory_order_release);
  if (options_.wait_set_seed && policy_ == Policy::RosDefault) sched::wait_set_order(specs, *options_.wait_set_seed);
  if (T->groups.empty()) T->groups.push_back(sched::GroupSpec{});
  T->queue = std::make_unique<sched::ReadyQueue>(policy_, specs, T->groups, nthreads);
  std::vector<bool> rt;
  for (const auto& ts : threads_spec_) rt.push_back(ts.role == CriticalityClass::RealTime);
  T->admission = std::make_unique<sched::Admission>(*T->queue, sched::admission_rule(policy_, rt), rt);

  // New entities: timers armed, wait sets for waitables with timers, event callbacks installed
  // (rcl reports the events that arrived before at once; they are counted, the slot enlisted).
  const Duration now = clock_now();
  for (Slot* s : created) {
    if (s->kind == Kind::Timer && s->steady && arm(*s, now, true) > 0)
      notes.push_back("timer '" + s->stats.name + "' was armed after its first release on the release grid: it "
                      "starts at a later grid instant (its offset holds; the common start of the run's timers does "
                      "not — set " + std::string(sched::kReleaseEpochEnv) + " for every process of the run)");
    if (s->kind == Kind::Waitable && !s->wt_timers.empty()) {
      if (auto w = s->wt.lock()) {
        s->ws = std::make_unique<rcl_wait_set_t>(rcl_get_zero_initialized_wait_set());
        if (rcl_wait_set_init(s->ws.get(), w->get_number_of_ready_subscriptions(),
                              w->get_number_of_ready_guard_conditions(), w->get_number_of_ready_timers(),
                              w->get_number_of_ready_clients(), w->get_number_of_ready_services(),
                              w->get_number_of_ready_events(), context_->get_rcl_context().get(),
                              rcl_get_default_allocator()) != RCL_RET_OK) {
          rcl_reset_error();
          s->ws.reset();
          notes.push_back("'" + s->stats.name + "': its timers cannot be waited for; it runs on its events only");
        }
      }
    }
  }
  std::vector<Slot*> removed;
  {
    std::unique_lock<runtime::PiMutex> lk(mutex_);
    for (auto& s : all_slots_)
      if (s->id != kNoCallback) {
        s->id = kNoCallback;
        removed.push_back(s.get());
      }
    for (std::size_t i = 0; i < T->slots.size(); ++i) {
      Slot* s = T->slots[i];
      s->id = static_cast<CallbackId>(i);
      removed.erase(std::remove(removed.begin(), removed.end(), s), removed.end());
    }
    for (auto& sp : made) {
      sp->mon = static_cast<std::uint32_t>(all_slots_.size());
      monitor_names_.push_back(sp->stats.name);
      all_slots_.push_back(std::move(sp));
    }
    for (auto& n : notes) warnings_.push_back(std::move(n));
    // Running instances keep their group busy in the new queue (a removed entity's instance
    // keeps the group of its successor slot busy when the group stays).
    for (Running& r : running_) {
      if (!r.slot) continue;
      r.qid = r.slot->id;
      if (r.qid == kNoCallback && !r.slot->reentrant)
        for (Slot* s : T->slots)
          if (s->group_key == r.slot->group_key) r.qid = s->id;
      if (r.qid != kNoCallback) T->queue->start(r.qid);
    }
    for (Slot* s : T->slots) s->released = false;
    tables_ = std::move(T);
    next_timer_due_ = 0;
    next_rcl_check_ = 0;
    // Work that was pending (queued in the old tables, or events counted meanwhile) is released
    // in the new ones.
    for (Slot* s : tables_->slots)
      if (s->kind != Kind::Timer && (s->pending.load() > 0 || s->poll.load())) make_ready(*s);
  }
  for (Slot* s : removed) uninstall(*s);  // first: a re-bound entity gets its new slot's callbacks
  for (Slot* s : created) install(*s);
  wake_others();
  return true;
}

void ChainExecutor::install(Slot& s) {
  Slot* p = &s;
  try {
    switch (s.kind) {
      case Kind::Subscription:
        if (auto sp = s.sub.lock()) sp->set_on_new_message_callback([p](std::size_t n) { on_event(p, n, -1); });
        break;
      case Kind::Service:
        if (auto sp = s.srv.lock()) sp->set_on_new_request_callback([p](std::size_t n) { on_event(p, n, -1); });
        break;
      case Kind::Client:
        if (auto sp = s.cli.lock()) sp->set_on_new_response_callback([p](std::size_t n) { on_event(p, n, -1); });
        break;
      case Kind::Waitable:
        if (auto sp = s.wt.lock()) sp->set_on_ready_callback([p](std::size_t n, int data) { on_event(p, n, data); });
        break;
      case Kind::Timer:
        if (auto sp = s.timer.lock())
          sp->set_on_reset_callback([p](std::size_t) {
            p->reset.store(true, std::memory_order_release);
            on_event(p, 0, -1);
          });
        break;
    }
  } catch (const std::exception& e) {
    std::unique_lock<runtime::PiMutex> lk(mutex_);
    warnings_.push_back("'" + s.stats.name + "': no event callback (" + e.what() + "); it will not run");
  }
}

void ChainExecutor::uninstall(Slot& s) {
  try {
    switch (s.kind) {
      case Kind::Subscription:
        if (auto sp = s.sub.lock()) sp->clear_on_new_message_callback();
        break;
      case Kind::Service:
        if (auto sp = s.srv.lock()) sp->clear_on_new_request_callback();
        break;
      case Kind::Client:
        if (auto sp = s.cli.lock()) sp->clear_on_new_response_callback();
        break;
      case Kind::Waitable:
        if (auto sp = s.wt.lock()) sp->clear_on_ready_callback();
        break;
      case Kind::Timer:
        if (auto sp = s.timer.lock()) sp->clear_on_reset_callback();
        break;
    }
  } catch (...) {
  }
}

// ---- the dispatch path -----------------------------------------------------------------------

void ChainExecutor::on_event(Slot* s, std::size_t n, int data) noexcept {
  if (n > 0) {
    if (s->kind == Kind::Waitable) {
      if (data >= 0 && static_cast<std::size_t>(data) < kWaitableIds)
        s->wdata[static_cast<std::size_t>(data)].fetch_add(static_cast<std::int32_t>(n), std::memory_order_relaxed);
      else
        s->wother.fetch_add(static_cast<std::int32_t>(n), std::memory_order_relaxed);
      s->pending.fetch_add(static_cast<std::int64_t>(n), std::memory_order_release);
    } else {
      // A keep-last queue holds at most `depth` items: events beyond it are dropped inputs.
      std::int64_t cur = s->pending.load(std::memory_order_relaxed);
      for (;;) {
        std::int64_t want = cur + static_cast<std::int64_t>(n);
        std::int64_t drop = 0;
        if (s->depth > 0 && want > s->depth) {
          drop = want - s->depth;
          want = s->depth;
        }
        if (s->pending.compare_exchange_weak(cur, want, std::memory_order_acq_rel)) {
          if (drop > 0) s->event_drops.fetch_add(static_cast<std::uint64_t>(drop), std::memory_order_relaxed);
          break;
        }
      }
    }
  }
  ChainExecutor* ex = s->ex;
  if (!s->enlisted.exchange(true, std::memory_order_acq_rel)) {
    Slot* head = ex->dirty_.load(std::memory_order_relaxed);
    do {
      s->next_dirty = head;
    } while (!ex->dirty_.compare_exchange_weak(head, s, std::memory_order_release, std::memory_order_relaxed));
  }
  ex->wake_others();
}

void ChainExecutor::wake_others() noexcept {
  wake_.fetch_add(1, std::memory_order_seq_cst);
  if (sleepers_.load(std::memory_order_seq_cst) > 0 && !wake_pending_.exchange(true, std::memory_order_seq_cst))
    runtime::futex_wake_all(&wake_);
}

// The first release of a steady timer. A timer bound to a model callback is armed on the
// release grid (sched/timer.hpp: E + offset + k·period on CLOCK_MONOTONIC, E the run's release
// epoch), as chainrt's runtime and rclpy executor arm theirs, so that the model's offsets hold
// whenever the node created its timer; returns the grid index it starts at (> 0: armed after its
// first grid release). Any other timer, and a bound one after a reset (rclcpp's reset restarts
// the period), keeps rcl's next call time (the steady clock is CLOCK_MONOTONIC, the executor's).
// With an injected clock (a deterministic scenario) the phase is the model's: now + offset for a
// bound timer (as the simulator arms it), one period after now for the others. No allocation.
std::int64_t ChainExecutor::arm(Slot& s, Duration now, bool first) noexcept {
  if (options_.clock) {
    s.clock.next = s.model_id ? now + binder_->callback(*s.model_id).offset : now + s.clock.period;
    return 0;
  }
  if (first && s.model_id && binder_) {
    const Duration epoch = options_.release_epoch ? *options_.release_epoch : sched::release_epoch(now);
    const sched::ReleaseGrid grid{epoch, binder_->callback(*s.model_id).offset, s.clock.period};
    const sched::ReleaseGrid::Start st = grid.start(now);
    s.clock.next = st.first;
    return st.start_index;
  }
  std::int64_t next = 0;
  if (rcl_timer_get_next_call_time(s.handle.get(), &next) == RCL_RET_OK) {
    s.clock.next = next;
  } else {
    rcl_reset_error();
    s.clock.next = now + s.clock.period;
  }
  return 0;
}

Duration ChainExecutor::ready_deadline(const Slot& s) const noexcept {
  if (s.kind == Kind::Timer) {
    if (!s.mcb || s.mcb->timer_rel_deadline == kNoDeadline) return kNoDeadline;
    return (s.steady ? s.clock.next : s.release_steady) + s.mcb->timer_rel_deadline;
  }
  if (s.mcb && !s.mcb->inputs.empty()) return s.mcb->inputs.front().deadline;
  return kNoDeadline;
}

void ChainExecutor::make_ready(Slot& s) noexcept {
  tables_->admission->released(s.id, AdmissionSource{this});
}

void ChainExecutor::harvest(Duration now) noexcept {
  Tables& T = *tables_;
  // The dirty list is a stack (newest first); released in the order the events came, which is
  // registration order for a fan-out, each push then costs the ready queue O(1) instead of a
  // sift to the top. The queue's order does not depend on the order of pushes.
  Slot* s = nullptr;
  for (Slot* top = dirty_.exchange(nullptr, std::memory_order_acquire); top;) {
    Slot* below = top->next_dirty;
    top->next_dirty = s;
    s = top;
    top = below;
  }
  while (s) {
    Slot* next = s->next_dirty;
    s->enlisted.store(false, std::memory_order_release);
    if (s->id != kNoCallback && s->id < T.slots.size() && T.slots[s->id] == s) {
      if (s->kind == Kind::Timer) {
        if (s->reset.exchange(false, std::memory_order_acq_rel) && s->steady) arm(*s, now, false);
        next_timer_due_ = 0;
        next_rcl_check_ = 0;
      } else if (s->pending.load(std::memory_order_acquire) > 0 || s->poll.load(std::memory_order_acquire)) {
        if (!T.admission->holds(s->id)) make_ready(*s);
      }
    }
    s = next;
  }
  if (now >= next_timer_due_) {
    Duration due = kNoDeadline;
    for (Slot* t : T.steady_timers) {
      if (t->released || T.admission->holds(t->id)) continue;
      bool cancelled = false;
      if (rcl_timer_is_canceled(t->handle.get(), &cancelled) != RCL_RET_OK) {
        rcl_reset_error();
        continue;
      }
      if (cancelled) continue;  // its reset re-arms it (the reset callback enlists it)
      if (t->clock.ready(now)) {
        t->released = true;
        make_ready(*t);
      } else {
        due = std::min(due, t->clock.next);
      }
    }
    next_timer_due_ = due;
  }
  if (now >= next_rcl_check_ && !T.rcl_timed.empty()) {
    Duration wait = kRclTimerCheck;
    for (Slot* t : T.rcl_timed) {
      if (t->kind == Kind::Timer) {
        if (t->released || T.admission->holds(t->id)) continue;
        std::int64_t left = 0;
        if (rcl_timer_get_time_until_next_call(t->handle.get(), &left) != RCL_RET_OK) {
          rcl_reset_error();  // cancelled: not ready
          continue;
        }
        if (left <= 0) {
          t->release_steady = now - std::min<Duration>(-left, t->clock.period);
          t->released = true;
          make_ready(*t);
        } else {
          wait = std::min<Duration>(wait, left);
        }
      } else {  // a waitable whose timer is due polls itself
        if (t->poll.load(std::memory_order_relaxed) || !t->ws) continue;
        for (auto& h : t->wt_timers) {
          std::int64_t left = 0;
          if (rcl_timer_get_time_until_next_call(h.get(), &left) != RCL_RET_OK) {
            rcl_reset_error();
            continue;
          }
          if (left <= 0) {
            t->poll.store(true, std::memory_order_release);
            if (!T.admission->holds(t->id)) make_ready(*t);
            break;
          }
          wait = std::min<Duration>(wait, left);
        }
      }
    }
    next_rcl_check_ = now + wait;
  }
}

void ChainExecutor::dispatch(sched::ThreadId t, CallbackId id, std::unique_lock<runtime::PiMutex>& lk) {
  Tables& T = *tables_;
  Slot& s = *T.slots[id];
  running_[t] = Running{&s, id};
  ++s.running;
  const Duration queued_deadline = T.queue->deadline(id);
  Stamp stamp;
  int wid = -1;
  bool poll = false;
  switch (s.kind) {
    case Kind::Timer: {
      s.released = false;
      if (s.steady) {
        // rcl_timer_call's rule (sched::TimerClock): the next release moves past now.
        const sched::TimerClock::Take tk = s.clock.take(clock_now());
        s.stats.drops += static_cast<std::uint64_t>(tk.skipped);
        stamp.release = tk.released;
        next_timer_due_ = std::min(next_timer_due_, s.clock.next);
      } else {
        stamp.release = s.release_steady;
      }
      if (s.mcb && s.mcb->timer_chain != kNoChain) {
        stamp.chain = s.mcb->timer_chain;
        stamp.deadline = s.mcb->timer_rel_deadline == kNoDeadline ? kNoDeadline : stamp.release + s.mcb->timer_rel_deadline;
        stamp.instance = s.mcb->instance++;
      }
      break;
    }
    case Kind::Waitable:
      if (s.poll.exchange(false, std::memory_order_acq_rel)) {
        poll = true;
      } else {
        for (std::size_t k = 0; k < kWaitableIds && wid < 0; ++k) {
          std::int32_t c = s.wdata[k].load(std::memory_order_relaxed);
          while (c > 0 && !s.wdata[k].compare_exchange_weak(c, c - 1, std::memory_order_acq_rel)) {
          }
          if (c > 0) wid = static_cast<int>(k);
        }
        if (wid < 0) {
          std::int32_t c = s.wother.load(std::memory_order_relaxed);
          while (c > 0 && !s.wother.compare_exchange_weak(c, c - 1, std::memory_order_acq_rel)) {
          }
          if (c > 0) wid = -2;
        }
        s.pending.fetch_sub(1, std::memory_order_acq_rel);
      }
      [[fallthrough]];
    default:
      if (s.kind != Kind::Waitable) s.pending.fetch_sub(1, std::memory_order_acq_rel);
      if (s.mcb && !s.mcb->inputs.empty() && (s.kind != Kind::Waitable || s.ipc)) {
        stamp = s.mcb->inputs.front();
        s.mcb->inputs.pop();
      }
      if (s.pending.load(std::memory_order_acquire) > 0 || s.poll.load(std::memory_order_acquire)) {
        make_ready(s);  // the next event is queued at once (a reentrant group lets another thread take it)
        if (T.queue->queued(id)) wake_others();
      }
      break;
  }
  // The chain instance reaches its successors in this executor when this callback STARTS: with
  // several threads a successor may be selected (its message arrived) while this one still runs.
  if (stamp.chain != kNoChain && s.mcb) {
    const auto& chains = bound_->chains;
    for (auto [succ, c] : s.mcb->successors)
      if (c == stamp.chain || (chains[c].source != kNoCallback && chains[c].source == chains[stamp.chain].source))
        bound_->cbs[succ].inputs.push(
            Stamp{stamp.release, chains[c].deadline > 0 ? stamp.release + chains[c].deadline : kNoDeadline, c, stamp.instance});
  }
  // The callback's priority for what it asks on the chain's behalf (the accelerator client).
  const runtime::DispatchContext context{T.queue->spec(id).priority, s.mon};
  lk.unlock();
  const runtime::DispatchScope in_dispatch(context);

  bool ran = true, threw = false;
  const Duration start = clock_now();
  runtime::CallbackCpu cpu_meter;  // on CLOCK_MONOTONIC: the executor's reading when that is its clock
  if (options_.clock) cpu_meter.start();
  else cpu_meter.start(start);
  try {
    switch (s.kind) {
      case Kind::Timer:
        if (auto tm = s.timer.lock()) {
          const std::shared_ptr<rcl_timer_call_info_t>& info = s.info[t];
          const rcl_ret_t r = rcl_timer_call_with_info(const_cast<rcl_timer_t*>(s.handle.get()), info.get());
          if (r != RCL_RET_OK) {  // cancelled meanwhile (or invalid): not run
            rcl_reset_error();
            ran = false;
          } else {
            if (s.steady && !options_.clock) info->expected_call_time = stamp.release;
            execute_timer(tm, info);
          }
        } else {
          ran = false;
        }
        break;
      case Kind::Subscription:
        if (auto sp = s.sub.lock()) execute_subscription(sp);
        else ran = false;
        break;
      case Kind::Service:
        if (auto sp = s.srv.lock()) execute_service(sp);
        else ran = false;
        break;
      case Kind::Client:
        if (auto sp = s.cli.lock()) execute_client(sp);
        else ran = false;
        break;
      case Kind::Waitable:
        if (auto w = s.wt.lock()) {
          if (poll) {
            ran = false;
            if (s.ws && !s.polling.exchange(true)) {
              ScopeExit done{[&s] { s.polling.store(false); }};
              rcl_wait_set_t& ws = *s.ws;
              if (rcl_wait_set_clear(&ws) == RCL_RET_OK) {
                w->add_to_wait_set(ws);
                const rcl_ret_t r = rcl_wait(&ws, 0);
                if (r == RCL_RET_OK && w->is_ready(ws)) {
                  w->execute(w->take_data());
                  ran = true;
                }
              }
              rcl_reset_error();
            }
          } else if (wid >= 0) {
            w->execute(w->take_data_by_entity_id(static_cast<std::size_t>(wid)));
          } else if (wid == -2) {
            w->execute(w->take_data());
          } else {
            ran = false;
          }
        } else {
          ran = false;
        }
        break;
    }
  } catch (const std::exception& e) {
    threw = true;
    if (options_.print_exceptions)
      std::fprintf(stderr, "chainrt: callback '%s' threw: %s (the executor goes on)\n", s.stats.name.c_str(), e.what());
    if (options_.rethrow_exceptions) {
      std::unique_lock<runtime::PiMutex> elk(mutex_);
      if (!pending_exception_) pending_exception_ = std::current_exception();
    }
  } catch (...) {
    threw = true;
    if (options_.print_exceptions)
      std::fprintf(stderr, "chainrt: callback '%s' threw a non-standard exception (the executor goes on)\n",
                   s.stats.name.c_str());
    if (options_.rethrow_exceptions) {
      std::unique_lock<runtime::PiMutex> elk(mutex_);
      if (!pending_exception_) pending_exception_ = std::current_exception();
    }
  }
  const Duration finish = clock_now();
  const Duration cpu = options_.clock ? cpu_meter.stop() : cpu_meter.stop(finish);
  lk.lock();
  if (ran || threw) {
    runtime::record_instance(s.stats, s.window, cpu, finish - start, threw);
    trace_.push(runtime::DispatchRecord{s.mon, t, start, finish, cpu, queued_deadline,
                                        stamp.chain != kNoChain ? stamp.release : 0});
    if (s.mcb)
      runtime::complete_chains(bound_->chains, s.mcb->leaf_of, static_cast<CallbackId>(s.model_id.value_or(kNoCallback)), stamp, finish,
                               record_from_,
                               [this](std::uint32_t c, Duration response) {
#if defined(CHAINRT_HAVE_LAME)
                                 const Duration d = bound_->chains[c].deadline;
                                 if (lame_ && d > 0 && response > d) lame_->on_deadline_miss(c);  // lock-free
#else
                                 (void)this, (void)c, (void)response;
#endif
                               });
  }
  --s.running;
  const CallbackId qid = running_[t].qid;  // (a rebuild meanwhile remapped it)
  if (qid != kNoCallback) tables_->queue->complete(qid);
  running_[t] = Running{};
}

bool ChainExecutor::run_one(sched::ThreadId t, Duration until, bool wait) {
  std::unique_lock<runtime::PiMutex> lk(mutex_);
  bool changed = true;
  for (;;) {
    if (rebuild_requested_.load(std::memory_order_acquire) || !tables_) {
      lk.unlock();
      rebuild();
      lk.lock();
      if (!tables_) return false;
    }
    if (!spinning.load() || !::rclcpp::ok(context_) || pending_exception_) return false;
    const std::uint32_t seq = wake_.load(std::memory_order_seq_cst);
    const Duration now = clock_now();
    Tables& T = *tables_;
    const std::size_t before = T.queue->size();
    harvest(now);
    if (T.queue->size() > before) changed = true;
    const CallbackId id = T.admission->next(t, AdmissionSource{this});
    if (T.admission->admitted()) changed = true;
    if (changed && !T.queue->empty() && sleepers_.load(std::memory_order_relaxed) > 0) wake_others();
    changed = false;
    if (id != kNoCallback) {
      dispatch(t, id, lk);
      return true;
    }
    if (!wait || now >= until) return false;
    Duration timeout = -1;
    auto bound = [&](Duration at) {
      if (at == kNoDeadline) return;
      const Duration d = std::max<Duration>(at - now, 0);
      timeout = timeout < 0 ? d : std::min(timeout, d);
    };
    bound(next_timer_due_);
    if (!T.rcl_timed.empty()) bound(next_rcl_check_);
    bound(until);
    if (timeout == 0) continue;
    if (options_.clock && (timeout < 0 || timeout > 1'000'000)) timeout = 1'000'000;
    sleepers_.fetch_add(1, std::memory_order_seq_cst);
    wake_pending_.store(false, std::memory_order_seq_cst);
    lk.unlock();
    runtime::futex_wait(&wake_, seq, timeout);
    lk.lock();
    sleepers_.fetch_sub(1, std::memory_order_seq_cst);
  }
}

void ChainExecutor::thread_main(sched::ThreadId t) {
  while (spinning.load() && ::rclcpp::ok(context_)) {
    run_one(t, kNoDeadline, true);
    std::unique_lock<runtime::PiMutex> lk(mutex_);
    if (pending_exception_) break;
  }
  spinning.store(false);
  wake_others();
}

// ---- rclcpp's spin functions -------------------------------------------------------------------

namespace {
struct SavedThread {
  int policy = SCHED_OTHER;
  sched_param param{};
  cpu_set_t cpus{};
  bool ok = false;
};
SavedThread save_thread() {
  SavedThread s;
  s.ok = pthread_getschedparam(pthread_self(), &s.policy, &s.param) == 0 &&
         sched_getaffinity(0, sizeof s.cpus, &s.cpus) == 0;
  return s;
}
void restore_thread(const SavedThread& s, bool had_reservation) {
  if (had_reservation) runtime::set_thread_reservation(static_cast<int>(gettid()), std::nullopt);
  if (!s.ok) return;
  pthread_setschedparam(pthread_self(), s.policy, &s.param);
  sched_setaffinity(0, sizeof s.cpus, &s.cpus);
}
}  // namespace

void ChainExecutor::spin() {
  if (spinning.exchange(true)) throw std::runtime_error("spin() called while already spinning");
  ScopeExit stop{[this] { spinning.store(false); }};
  start_checks();
  {
    std::unique_lock<runtime::PiMutex> lk(mutex_);
    if (started_at_ == 0) started_at_ = mono_ns();
  }
  start_stats();
  const std::size_t n = threads_spec_.size();
  ScopeExit lame_stop{[this] { stop_lame(); }};
  helpers_.clear();
  for (std::size_t t = 1; t < n; ++t)
    helpers_.emplace_back([this, t] {
      if (options_.thread_params) {
        runtime::ThreadSetupResult r = runtime::apply_thread_spec(threads_spec_[t]);
        std::unique_lock<runtime::PiMutex> lk(mutex_);
        for (auto& w : r.warnings) warnings_.push_back(std::move(w));
      }
      tids_[t].store(static_cast<int>(gettid()));
      thread_main(static_cast<sched::ThreadId>(t));
    });
  ScopeExit join{[this] {  // also when something below throws
    spinning.store(false);
    wake_others();
    for (auto& th : helpers_)
      if (th.joinable()) th.join();
    helpers_.clear();
  }};
  // Thread 0 is the caller; it takes its parameters only now, after every thread of the run
  // exists (a SCHED_DEADLINE thread may not create threads: clone fails with EAGAIN), and gets
  // its own back when spin() returns.
  tids_[0].store(static_cast<int>(gettid()));
  start_lame();
  const SavedThread saved = save_thread();
  bool reserved = false;
  if (options_.thread_params) {
    runtime::ThreadSetupResult r = runtime::apply_thread_spec(threads_spec_[0]);
    reserved = r.deadline;
    std::unique_lock<runtime::PiMutex> lk(mutex_);
    for (auto& w : r.warnings) warnings_.push_back(std::move(w));
  }
  thread_main(0);
  stop_lame();
  if (options_.thread_params) restore_thread(saved, reserved);
  tids_[0].store(0);
  spinning.store(false);
  wake_others();
  for (auto& th : helpers_)
    if (th.joinable()) th.join();
  helpers_.clear();
  for (std::size_t t = 1; t < tids_.size(); ++t) tids_[t].store(0);
  stop_stats();
  if (options_.print_report) print_summary();
  rethrow_pending();
}

void ChainExecutor::spin_once_impl(std::chrono::nanoseconds timeout) {
  start_checks();
  {
    std::unique_lock<runtime::PiMutex> lk(mutex_);
    if (started_at_ == 0) started_at_ = mono_ns();
  }
  const Duration until = timeout.count() < 0 ? kNoDeadline : clock_now() + timeout.count();
  run_one(0, until, true);
  rethrow_pending();
}

::rclcpp::FutureReturnCode ChainExecutor::spin_until_future_complete_impl(
    std::chrono::nanoseconds timeout,
    const std::function<std::future_status(std::chrono::nanoseconds)>& wait_for_future) {
  if (wait_for_future(std::chrono::seconds(0)) == std::future_status::ready) return ::rclcpp::FutureReturnCode::SUCCESS;
  if (spinning.exchange(true)) throw std::runtime_error("spin_until_future_complete() called while already spinning");
  ScopeExit stop{[this] { spinning.store(false); }};
  start_checks();
  {
    std::unique_lock<runtime::PiMutex> lk(mutex_);
    if (started_at_ == 0) started_at_ = mono_ns();
  }
  const Duration end = timeout.count() < 0 ? kNoDeadline : mono_ns() + timeout.count();
  while (::rclcpp::ok(context_) && spinning.load()) {
    // One callback at a time; the future is re-checked at least every 100 ms (it may be
    // completed by another thread).
    const Duration slice = std::min<Duration>(end == kNoDeadline ? kRclTimerCheck : end - mono_ns(), kRclTimerCheck);
    run_one(0, clock_now() + std::max<Duration>(slice, 0), true);
    rethrow_pending();
    if (wait_for_future(std::chrono::seconds(0)) == std::future_status::ready) return ::rclcpp::FutureReturnCode::SUCCESS;
    if (end != kNoDeadline && mono_ns() >= end) return ::rclcpp::FutureReturnCode::TIMEOUT;
  }
  return ::rclcpp::FutureReturnCode::INTERRUPTED;
}

void ChainExecutor::spin_some(std::chrono::nanoseconds max_duration) { spin_some_impl(max_duration, false); }

void ChainExecutor::spin_all(std::chrono::nanoseconds max_duration) {
  if (max_duration.count() < 0) throw std::invalid_argument("max_duration must be greater than or equal to 0");
  spin_some_impl(max_duration, true);
}

void ChainExecutor::spin_some_impl(std::chrono::nanoseconds max_duration, bool exhaustive) {
  if (spinning.exchange(true)) throw std::runtime_error("spin_some() called while already spinning");
  ScopeExit stop{[this] { spinning.store(false); }};
  start_checks();
  const Duration start = mono_ns();
  auto time_left = [&] { return max_duration.count() == 0 || mono_ns() - start < max_duration.count(); };
  std::size_t budget = SIZE_MAX;
  {
    std::unique_lock<runtime::PiMutex> lk(mutex_);
    if (started_at_ == 0) started_at_ = start;
    harvest(clock_now());
    tables_->admission->admit_all(AdmissionSource{this});
    if (!exhaustive) budget = tables_->queue->size() + tables_->admission->waiting();
  }
  for (std::size_t done = 0; done < budget && time_left() && ::rclcpp::ok(context_) && spinning.load(); ++done) {
    if (!run_one(0, 0, false)) break;
    rethrow_pending();
  }
  rethrow_pending();
}

void ChainExecutor::cancel() {
  ::rclcpp::Executor::cancel();
  wake_others();
}

void ChainExecutor::rethrow_pending() {
  std::exception_ptr e;
  {
    std::unique_lock<runtime::PiMutex> lk(mutex_);
    std::swap(e, pending_exception_);
  }
  if (e) std::rethrow_exception(e);
}

// ---- monitoring ---------------------------------------------------------------------------------

// LaME's controller: attached once (the initial plan's parameters), started with spin() when every
// executor thread runs (set_thread_reservation needs their ids), stopped before they end.
void ChainExecutor::start_lame() {
#if defined(CHAINRT_HAVE_LAME)
  if (!lame_) return;
  for (std::size_t t = 0; t < tids_.size(); ++t)
    for (int i = 0; i < 2000 && tids_[t].load() == 0 && spinning.load(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  if (!lame_attached_) {
    lame_->attach(*this);
    lame_attached_ = true;
  }
  lame_->start(started_at_);
#endif
}

void ChainExecutor::stop_lame() {
#if defined(CHAINRT_HAVE_LAME)
  if (lame_) lame_->stop();
#endif
}

std::string ChainExecutor::lame_log_json() const {
#if defined(CHAINRT_HAVE_LAME)
  if (lame_) return lame_->log_json();
#endif
  return "[]";
}

void ChainExecutor::start_stats() {
  if ((options_.stats_period <= 0 && !lame_) || stats_node_) return;
  static std::atomic<int> counter{0};
  ::rclcpp::NodeOptions no;
  no.context(context_).start_parameter_services(false).start_parameter_event_publisher(false).enable_rosout(false);
  stats_node_ = std::make_shared<::rclcpp::Node>(
      "chainrt_monitor_" + std::to_string(getpid()) + "_" + std::to_string(counter.fetch_add(1)), no);
  if (options_.stats_period > 0)
    stats_pub_ = stats_node_->create_publisher<chainrt_msgs::msg::ChainStats>(options_.stats_topic, 10);
  if (lame_)
    events_pub_ = stats_node_->create_publisher<std_msgs::msg::String>(runtime::events_topic(options_.stats_topic), 10);
  stats_stop_.store(0);
  if (options_.stats_period > 0) stats_thread_ = std::thread([this] { stats_main(); });
}

void ChainExecutor::stop_stats() {
  if (stats_thread_.joinable()) {
    stats_stop_.store(1);
    runtime::futex_wake_all(&stats_stop_);
    stats_thread_.join();
  }
  std::lock_guard<std::mutex> lk(publish_mutex_);
  stats_pub_.reset();
  events_pub_.reset();
  stats_node_.reset();
}

bool ChainExecutor::publish_event(const std::string& json) {
  std::lock_guard<std::mutex> lk(publish_mutex_);
  if (!events_pub_) return false;
  std_msgs::msg::String msg;
  msg.data = json;
  try {
    static_cast<::rclcpp::Publisher<std_msgs::msg::String>*>(events_pub_.get())->publish(msg);
  } catch (const std::exception&) {
    return false;
  }
  return true;
}

// ---- runtime::ControlledExecutor ------------------------------------------------------------------

std::size_t ChainExecutor::callback_count() const {
  std::unique_lock<runtime::PiMutex> lk(mutex_);
  return tables_ ? tables_->slots.size() : 0;
}

CallbackId ChainExecutor::callback_id(const std::string& name) const {
  std::unique_lock<runtime::PiMutex> lk(mutex_);
  if (tables_)
    for (const Slot* s : tables_->slots)
      if (s->stats.name == name) return s->id;
  return kNoCallback;
}

std::string ChainExecutor::callback_name(CallbackId id) const {
  std::unique_lock<runtime::PiMutex> lk(mutex_);
  return tables_ && id < tables_->slots.size() ? tables_->slots[id]->stats.name : std::string();
}

sched::CallbackSpec ChainExecutor::spec_of(CallbackId id) const {
  std::unique_lock<runtime::PiMutex> lk(mutex_);
  if (!tables_ || id >= tables_->slots.size()) throw std::invalid_argument("spec_of: no such callback");
  return tables_->queue->spec(id);
}

std::string ChainExecutor::set_thread_reservation(sched::ThreadId t, const std::optional<Reservation>& r) {
  const int tid = t < tids_.size() ? tids_[t].load() : 0;
  if (tid == 0) return "executor thread " + std::to_string(t) + " is not running";
  return runtime::set_thread_reservation(tid, r);
}

// Priorities and affinities as runtime::Executor::reconfigure takes them; the groups stay
// rclcpp's (a mutually exclusive group of the user's code must stay one).
void ChainExecutor::reconfigure(std::vector<sched::CallbackSpec> specs, std::vector<sched::GroupSpec>) {
  std::unique_lock<runtime::PiMutex> lk(mutex_);
  if (!tables_ || specs.size() != tables_->slots.size())
    throw std::invalid_argument("reconfigure: " + std::to_string(specs.size()) + " callback specs for " +
                                std::to_string(tables_ ? tables_->slots.size() : 0) + " callbacks");
  Tables& T = *tables_;
  std::vector<sched::CallbackSpec> next;
  for (CallbackId id = 0; id < specs.size(); ++id) {
    sched::CallbackSpec sp = T.queue->spec(id);  // kind, group, wait-set position stay
    sp.priority = specs[id].priority;
    sp.affinity = specs[id].affinity;
    next.push_back(sp);
    const Slot* s = T.slots[id];
    if (s->model_id) {
      if (lame_params_.size() <= *s->model_id) lame_params_.resize(*s->model_id + 1);
      lame_params_[*s->model_id] = std::make_pair(sp.priority, sp.affinity);
    }
  }
  lk.unlock();
  auto fresh = std::make_unique<sched::ReadyQueue>(policy_, std::move(next), T.groups, threads_spec_.size());
  lk.lock();
  if (tables_.get() != &T) return;  // rebuilt meanwhile: the rebuild took lame_params_
  for (const Running& r : running_)
    if (r.slot && r.qid != kNoCallback) fresh->start(r.qid);
  for (CallbackId id = 0; id < T.slots.size(); ++id)
    if (T.queue->queued(id)) fresh->push(id, T.queue->deadline(id));
  std::swap(*T.queue, *fresh);  // the admission rule keeps pointing at *T.queue
  lk.unlock();
  wake_others();
}

void ChainExecutor::take_cpu_window(std::vector<runtime::CpuWindow>& out) {
  std::unique_lock<runtime::PiMutex> lk(mutex_);
  const std::size_t n = tables_ ? tables_->slots.size() : 0;
  out.resize(n);
  for (std::size_t i = 0; i < n; ++i) {
    out[i] = tables_->slots[i]->window;
    tables_->slots[i]->window = runtime::CpuWindow{};
  }
}

// The monitoring messages, off the dispatch path (allocates): every stats_period, and once more
// when spinning ends.
void ChainExecutor::stats_main() {
  Duration next = mono_ns() + options_.stats_period;
  std::uint64_t published = 0;
  std::string executor_name = binder_ ? binder_->executor_name() : "rclcpp-" + std::to_string(getpid());
  for (;;) {
    const bool stopping = stats_stop_.load() != 0;
    if (!stopping) {
      const Duration left = next - mono_ns();
      if (left > 0) {
        runtime::futex_wait(&stats_stop_, 0, std::min<Duration>(left, kRclTimerCheck));
        continue;
      }
      next += options_.stats_period;
    }
    runtime::RunReport r = report(2048);
    r.run_id = options_.run_id;
    r.executor = executor_name;
    std::vector<runtime::DispatchRecord> recent;
    std::vector<std::string> names;
    std::uint64_t lost = 0;
    {
      std::unique_lock<runtime::PiMutex> lk(mutex_);
      lost = trace_.take_since(published, record_from_, recent);
      names = monitor_names_;
    }
    chainrt_msgs::msg::ChainStats msg;
    runtime::to_message(r, stats_seq_++, lost, recent, names, msg);
    try {
      static_cast<::rclcpp::Publisher<chainrt_msgs::msg::ChainStats>*>(stats_pub_.get())->publish(msg);
    } catch (const std::exception&) {  // the context went away: nothing left to publish to
      return;
    }
    if (stopping) return;
  }
}

runtime::RunReport ChainExecutor::report(std::size_t max_samples) const {
  runtime::RunReport r;
  r.policy = to_string(policy_);
  r.threads = threads_spec_.size();
  std::unique_lock<runtime::PiMutex> lk(mutex_);
  r.duration_ns = started_at_ ? mono_ns() - started_at_ : 0;
  r.dispatches = trace_.count();
  r.warnings = warnings_;
  if (tables_ && !tables_->unused.empty()) {
    std::string u;
    for (const auto& n : tables_->unused) u += (u.empty() ? "" : ", ") + n;
    r.warnings.push_back("model callbacks without a real counterpart: " + u);
  }
  std::vector<std::uint64_t> drops(all_slots_.size(), 0);
  for (const auto& s : all_slots_) {
    runtime::CallbackStats cs = s->stats;
    cs.drops += s->event_drops.load(std::memory_order_relaxed);
    drops[s->mon] = cs.drops;
    // removed entities that never ran are not reported
    if (s->id == kNoCallback && cs.instances == 0) continue;
    r.callbacks.push_back(std::move(cs));
  }
  if (bound_)
    for (const auto& ch : bound_->chains) {
      runtime::ChainStats st;
      st.name = ch.name;
      st.period_ns = ch.period;
      st.deadline_ns = ch.deadline;
      ch.latency.summarize(st, max_samples);
      for (const auto& s : all_slots_)
        if (s->model_id && std::find(ch.members.begin(), ch.members.end(), *s->model_id) != ch.members.end())
          st.drops += drops[s->mon];
      r.chains.push_back(std::move(st));
    }
  return r;
}

std::string ChainExecutor::report_json(bool with_samples) const {
  runtime::RunReport r = report(with_samples ? SIZE_MAX : 0);
  std::string js = runtime::to_json(r, with_samples);
  js.pop_back();
  js += ", \"unmatched\": [";
  const auto um = unmatched();
  for (std::size_t i = 0; i < um.size(); ++i) js += (i ? ", \"" : "\"") + runtime::json_escape(um[i]) + "\"";
  return js + "]}";
}

std::vector<runtime::DispatchRecord> ChainExecutor::trace() const {
  std::unique_lock<runtime::PiMutex> lk(mutex_);
  return trace_.snapshot();
}

std::string ChainExecutor::name_of(CallbackId monitor_id) const {
  std::unique_lock<runtime::PiMutex> lk(mutex_);
  return monitor_id < monitor_names_.size() ? monitor_names_[monitor_id] : std::string();
}

std::vector<std::string> ChainExecutor::unmatched() const {
  std::unique_lock<runtime::PiMutex> lk(mutex_);
  return tables_ ? tables_->unmatched : std::vector<std::string>{};
}

void ChainExecutor::adopt_model(std::unique_ptr<Model> m, const std::string& executor) {
  model_ = std::move(m);
  options_.executor = executor;
  bind_model({});
  bound_ = std::make_unique<Bound>();
  init_chains();
  {
    std::unique_lock<runtime::PiMutex> lk(mutex_);
    running_.assign(threads_spec_.size(), Running{});
    tids_ = std::vector<std::atomic<int>>(threads_spec_.size());
  }
  for (auto& s : all_slots_)
    if (s->id != kNoCallback) s->model_id.reset(), s->stale = true;
}

std::vector<ChainExecutor::EntityView> ChainExecutor::entity_views() const {
  std::vector<EntityView> out;
  std::unique_lock<runtime::PiMutex> lk(mutex_);
  if (!tables_) return out;
  for (const Slot* s : tables_->slots) {
    if (s->kind == Kind::Waitable || !s->listed) continue;
    EntityView v;
    v.key = s->key;
    v.group = s->group_key;
    v.reentrant = s->reentrant;
    v.fq_node = s->stats.node;
    v.kind = s->kind == Kind::Timer ? CallbackKind::Timer
           : s->kind == Kind::Service ? CallbackKind::Service
           : s->kind == Kind::Client ? CallbackKind::Client : CallbackKind::Subscription;
    v.period = s->clock.period;
    v.topic = s->stats.topic;
    if (s->model_id && binder_) v.model_name = binder_->callback(*s->model_id).name;
    v.cpu_max = s->stats.cpu_max;
    out.push_back(std::move(v));
  }
  return out;
}

std::vector<std::string> ChainExecutor::unused_model_callbacks() const {
  std::unique_lock<runtime::PiMutex> lk(mutex_);
  return tables_ ? tables_->unused : std::vector<std::string>{};
}

Policy ChainExecutor::policy() const { return policy_; }
std::size_t ChainExecutor::thread_count() const { return threads_spec_.size(); }

void ChainExecutor::record_from_now() {
  std::unique_lock<runtime::PiMutex> lk(mutex_);
  record_from_ = clock_now();
}

std::uint64_t ChainExecutor::exceptions() const {
  std::unique_lock<runtime::PiMutex> lk(mutex_);
  std::uint64_t n = 0;
  for (const auto& s : all_slots_) n += s->stats.exceptions;
  return n;
}

std::vector<std::string> ChainExecutor::warnings() const {
  std::unique_lock<runtime::PiMutex> lk(mutex_);
  return warnings_;
}

void ChainExecutor::print_summary() const {
  const runtime::RunReport r = report(SIZE_MAX);
  std::fprintf(stderr, "chainrt rclcpp: policy %s, %zu thread(s), %llu callbacks in %.1f s\n", r.policy.c_str(),
               r.threads, static_cast<unsigned long long>(r.dispatches), static_cast<double>(r.duration_ns) / 1e9);
  for (const auto& c : r.chains)
    std::fprintf(stderr, "  chain %s: %llu instances, mean %.2f ms, p99 %.2f ms, max %.2f ms, %llu deadline misses, %llu drops\n",
                 c.name.c_str(), static_cast<unsigned long long>(c.instances), c.mean_ns / 1e6,
                 static_cast<double>(c.p99_ns) / 1e6, static_cast<double>(c.wcrt_ns) / 1e6,
                 static_cast<unsigned long long>(c.deadline_misses), static_cast<unsigned long long>(c.drops));
  for (const auto& c : r.callbacks)
    if (c.exceptions)
      std::fprintf(stderr, "  callback %s: threw %llu time(s)\n", c.name.c_str(),
                   static_cast<unsigned long long>(c.exceptions));
  const auto um = unmatched();
  if (!um.empty()) {
    std::string s;
    for (const auto& n : um) s += (s.empty() ? "" : ", ") + n;
    std::fprintf(stderr, "  not in the model (default: lowest priority, no deadline): %s\n", s.c_str());
  }
  for (const auto& w : r.warnings) std::fprintf(stderr, "  warning: %s\n", w.c_str());
}

}  // namespace chainrt::rclcpp
