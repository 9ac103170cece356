// chainrt rclcpp: the ChainExecutor's private state — its slots, tables, the model callbacks it
// binds, one rebuild's working state — shared by its sources (chain_executor.cpp: set-up and
// the dispatch path; chain_executor_entities.cpp: nodes, groups and rebuilding the tables;
// chain_executor_monitor.cpp: monitoring, reports, LaME's controller interface). Private to
// rclcpp/.
#pragma once

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

using sched::kNoChain;
using sched::Stamp;
using sched::CallbackId;
using sched::kNoCallback;
using sched::kNoDeadline;

namespace detail {

enum class Kind : std::uint8_t { Timer, Subscription, Service, Client, Waitable };

constexpr Duration kRclTimerCheck = 100'000'000;  // rcl-timed timers are read at least this often
constexpr std::size_t kWaitableIds = 8;           // waitable entity ids counted one by one

using runtime::now_ns;

// rclcpp's own per-node entities, which run like every entity but are never listed as
// unmatched (the one place that knows them): the parameter and type-description services of
// every node, and on rclcpp 28 the TimeSource's /parameter_events subscription
// (CHAINRT_RCLCPP_TIME_SOURCE_SUBSCRIBES_PARAMETER_EVENTS, ros_compat.hpp). The latter is told
// from a user's own subscription to that topic as the node's first one, in its default group:
// the node's constructor creates it before any user entity.
inline bool rclcpp_own_service(const std::string& node_fqn, const std::string& service) {
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
inline bool rclcpp_own_subscription([[maybe_unused]] const std::string& topic, [[maybe_unused]] bool default_group,
                             [[maybe_unused]] bool first_of_node) {
#if CHAINRT_RCLCPP_TIME_SOURCE_SUBSCRIBES_PARAMETER_EVENTS
  return topic == "/parameter_events" && default_group && first_of_node;
#else
  return false;
#endif
}

// Runs `run` on the entity of `weak` while it lives; false when it is gone.
template <class E, class Run>
bool run_alive(const std::weak_ptr<E>& weak, Run&& run) {
  const std::shared_ptr<E> sp = weak.lock();
  if (sp) run(sp);
  return sp != nullptr;
}

struct ScopeExit {
  std::function<void()> fn;
  ~ScopeExit() { fn(); }
};

// A node's name and fully qualified name ("" without a node).
inline std::string node_of(const ::rclcpp::node_interfaces::NodeBaseInterface::SharedPtr& n) {
  return n ? std::string(n->get_name()) : std::string();
}
inline std::string fqn_of(const ::rclcpp::node_interfaces::NodeBaseInterface::SharedPtr& n) {
  return n ? std::string(n->get_fully_qualified_name()) : std::string();
}

}  // namespace detail
using namespace detail;

// A chain-relevant model callback (persists across rebuilds; all slots bound to it share it:
// an intra-process subscription and its rcl subscription are one model callback).
struct ChainExecutor::ModelCb {
  sched::ChainSource source;               // a timer: the chain instances it starts
  std::vector<std::pair<std::size_t, std::uint32_t>> successors;  // (model id, chain)
  runtime::StampRing inputs;  // instances handed over by chain predecessors in this executor
  std::size_t depth = 64;        // the most instances kept: its subscription's keep-last depth
  std::uint32_t in_flight = 0;  // predecessors running that handed it one (their message may follow)
  bool ipc_twin = false;        // an intra-process twin shares it (its messages counted apart)
};

// Calls f(successor, chain) for every chain successor in the executor `b` that an instance `st`
// of `from` goes to: its own chain's, and those of the chains its source timer also starts
// (`chains`: the chains' sources, sched::ChainCompletion). Once per successor callback, whose one
// message the instance is: chains sharing a hop (a common prefix) hand it over once — as the
// stamp's own chain where that takes the hop, else as the first of its source's chains that does
// (one per chain grew the successor's queue by one instance per period, measured from ever older
// releases).
template <class BoundCallbacks, class ModelCallback, class F>
void hand_over(const sched::ChainCompletion& chains, BoundCallbacks& b, const ModelCallback& from, const Stamp& st,
               F&& f) noexcept {
  const auto& succ = from.successors;
  auto carries = [&](std::uint32_t c) {
    return c == st.chain || chains.chain(c).source == chains.chain(st.chain).source;
  };
  for (std::size_t i = 0; i < succ.size(); ++i) {
    const auto [to, c] = succ[i];
    if (!carries(c)) continue;
    bool skip = false;
    for (std::size_t j = 0; j < succ.size() && !skip && c != st.chain; ++j)
      skip = succ[j].first == to && (succ[j].second == st.chain || (j < i && carries(succ[j].second)));
    if (!skip) f(b.cbs[to], c);
  }
}

// The instances waiting at `m` that can still belong to its messages: as many as messages wait
// (`waiting`), plus one per predecessor still running; older ones were handed over by runs that
// published nothing (a node fusing two inputs publishes once per pair) or whose message the
// keep-last queue dropped, and would give later messages stale releases and deadlines. The
// lock held; never allocates.
template <class ModelCallback>
void keep_own(ModelCallback& m, std::int64_t waiting) noexcept {
  if (m.ipc_twin) return;
  m.inputs.cap(static_cast<std::size_t>(waiting > 0 ? waiting : 0) + m.in_flight);  // (at least one kept)
  m.inputs.cap(m.depth);
}

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
  // The ready queue, admission and running threads (sched/dispatcher.hpp).
  std::unique_ptr<sched::Dispatcher> dispatcher;
  std::vector<Slot*> steady_timers;
  std::vector<Slot*> rcl_timed;            // timers on ROS/system time, waitables with timers
  std::vector<std::string> unmatched;
  std::vector<std::string> unused;
};

struct ChainExecutor::Bound {
  std::vector<ModelCb> cbs;                // by model id
};

// The dispatcher's view of the slots (sched::Dispatcher's Src).
struct ChainExecutor::Readiness {
  const ChainExecutor* ex;
  bool ready(CallbackId id) const noexcept {
    const Slot& s = *ex->tables_->slots[id];
    if (s.kind == Kind::Timer) return s.released;
    return s.pending.load(std::memory_order_relaxed) > 0 || s.poll.load(std::memory_order_relaxed);
  }
  Duration deadline(CallbackId id) const noexcept { return ex->ready_deadline(*ex->tables_->slots[id]); }
};

// One rebuild's working state (rebuild_mutex_ held): rclcpp's groups with their nodes, the
// slots found (kept, made anew), and the warnings.
struct ChainExecutor::FoundGroup {
  ::rclcpp::CallbackGroup::SharedPtr group;
  ::rclcpp::node_interfaces::NodeBaseInterface::SharedPtr node;  // nullptr: not known
};
struct ChainExecutor::Rebuild {
  std::vector<FoundGroup> ordered;  // nodes in the order added, their groups in creation order
  std::vector<std::string> notes;
  bool rebind = false;         // the model was bound now: every entity is bound again
  std::unordered_map<const void*, Slot*> by_key;  // existing slots by entity
  std::vector<Slot*> live;     // every slot of the new tables
  std::vector<Slot*> created;  // ... made in this rebuild (not visible to the dispatch path yet)
  std::vector<std::unique_ptr<Slot>> made;  // joins all_slots_ under the lock
};

}  // namespace chainrt::rclcpp
