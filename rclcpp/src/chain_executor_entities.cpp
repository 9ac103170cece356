// chainrt rclcpp: the ChainExecutor's entities — nodes and callback groups (rclcpp's collector),
// bindings to the model, and rebuilding the tables when they change: collect, match, tables,
// install.
#include "chain_executor_state.hpp"

namespace chainrt::rclcpp {

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

// collect (rclcpp's groups and entities) -> match (bind to the model) -> tables (the specs and
// the dispatcher) -> install (swap in under the lock, event callbacks).
bool ChainExecutor::rebuild() {
  std::unique_lock<std::mutex> rl(rebuild_mutex_, std::try_to_lock);
  if (!rl.owns_lock()) return false;  // another thread rebuilds
  rebuild_requested_.store(false, std::memory_order_release);
  Rebuild r;
  collect_groups(r);
  collect_entities(r);
  if (binder_) match_slots(r);
  std::unique_ptr<Tables> T = make_tables(r);
  prepare_created(r);
  install_tables(r, std::move(T));
  return true;
}

// What rclcpp says belongs to this executor, with the node of every group; a model not bound yet
// is bound to the model executor of the first node the model has.
void ChainExecutor::collect_groups(Rebuild& r) {
  using Found = FoundGroup;
  collector_.update_collections();
  std::vector<::rclcpp::CallbackGroup::WeakPtr> weak_groups = collector_.get_all_callback_groups();
  std::vector<::rclcpp::CallbackGroup::SharedPtr> groups;
  for (auto& w : weak_groups)
    if (auto g = w.lock()) groups.push_back(g);
  {
    std::lock_guard<std::mutex> lk(nodes_mutex_);
    const auto nodes = live_nodes();
    for (auto& n : nodes)
      n->for_each_callback_group([&](const ::rclcpp::CallbackGroup::SharedPtr& g) {
        if (std::find(groups.begin(), groups.end(), g) == groups.end()) return;
        for (auto& f : r.ordered)
          if (f.group == g) return;
        r.ordered.push_back(Found{g, n});
      });
  }
  for (auto& g : groups) {  // groups of nodes not added through this executor's add_node
    bool known = false;
    for (auto& f : r.ordered) known = known || f.group == g;
    if (!known) r.ordered.push_back(Found{g, nullptr});
  }
  if (model_ && !binder_) {  // bind to the model executor of the first node the model has
    std::vector<std::string> names;
    for (auto& f : r.ordered)
      if (f.node) names.push_back(f.node->get_name());
    bool hosted = false;
    for (const auto& n : names)
      for (const auto& mn : model_->nodes) hosted = hosted || mn.name == n;
    if (hosted) {
      const std::size_t threads_before = threads_spec_.size();
      const auto spec_before = threads_spec_;
      bind_model(names);
      if (spinning.load() && threads_spec_.size() != threads_before) {
        r.notes.push_back("the model executor '" + binder_->executor_name() +
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
      r.rebind = true;  // entities seen before the model was bound are bound now
    }
  }
}

// A slot per entity of the groups: the existing one when it is the same entity in the same
// group, else a new one, described from rclcpp's entity.
void ChainExecutor::collect_entities(Rebuild& r) {
  using Found = FoundGroup;
  for (auto& s : all_slots_)
    if (s->id != kNoCallback) r.by_key[s->key] = s.get();
  auto slot_for = [&](const void* key, Kind kind, const auto& entity, const Found& f) -> Slot* {
    auto it = r.by_key.find(key);
    if (it != r.by_key.end()) {
      Slot* s = it->second;
      bool same = false;
      switch (s->kind) {
        case Kind::Timer: same = s->timer.lock().get() == static_cast<const void*>(entity.get()); break;
        case Kind::Subscription: same = s->sub.lock().get() == static_cast<const void*>(entity.get()); break;
        case Kind::Service: same = s->srv.lock().get() == static_cast<const void*>(entity.get()); break;
        case Kind::Client: same = s->cli.lock().get() == static_cast<const void*>(entity.get()); break;
        case Kind::Waitable: same = s->wt.lock().get() == static_cast<const void*>(entity.get()); break;
      }
      if (same && s->kind == kind && s->group_key == f.group.get() && !s->stale && !r.rebind) {
        r.live.push_back(s);
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
    r.made.push_back(std::move(sp));
    r.live.push_back(s);
    r.created.push_back(s);
    return s;
  };

  for (const Found& f : r.ordered) {
    f.group->collect_all_ptrs(
        [&](const ::rclcpp::SubscriptionBase::SharedPtr& sub) {
          if (Slot* s = slot_for(sub->get_subscription_handle().get(), Kind::Subscription, sub, f)) describe(r, *s, sub, f);
        },
        [&](const ::rclcpp::ServiceBase::SharedPtr& srv) {
          if (Slot* s = slot_for(srv->get_service_handle().get(), Kind::Service, srv, f)) {
            s->srv = srv;
            describe_endpoint(r, *s, CallbackKind::Service, srv->get_service_name(), f);
            s->listed = !rclcpp_own_service(s->stats.node, s->stats.topic);
          }
        },
        [&](const ::rclcpp::ClientBase::SharedPtr& cli) {
          if (Slot* s = slot_for(cli->get_client_handle().get(), Kind::Client, cli, f)) {
            s->cli = cli;
            describe_endpoint(r, *s, CallbackKind::Client, cli->get_service_name(), f);
          }
        },
        [&](const ::rclcpp::TimerBase::SharedPtr& tm) {
          if (Slot* s = slot_for(tm->get_timer_handle().get(), Kind::Timer, tm, f)) describe(r, *s, tm, f);
        },
        [&](const ::rclcpp::Waitable::SharedPtr& w) {
          if (Slot* s = slot_for(w.get(), Kind::Waitable, w, f)) describe(r, *s, w, f);
        });
  }
}

// "<node>/<label>", "#k" for the k-th of that name (names are never reused in one executor).
void ChainExecutor::name_slot(const Rebuild& r, Slot& s, const FoundGroup& f, const std::string& label) {
  const std::string node = f.node ? f.node->get_name() : std::string("?");
  const std::string base = node + "/" + label;
  std::size_t k = 0;
  auto same = [&](const Slot& o) { return &o != &s && (o.stats.name == base || o.stats.name.rfind(base + "#", 0) == 0); };
  for (auto& o : all_slots_) k += same(*o);
  for (auto& o : r.made) k += same(*o);
  s.stats.name = k == 0 ? base : base + "#" + std::to_string(k);
}

// A service's or a client's slot: its kind, service name, node and name.
void ChainExecutor::describe_endpoint(const Rebuild& r, Slot& s, CallbackKind kind, const std::string& service,
                                      const FoundGroup& f) {
  s.stats.kind = kind == CallbackKind::Service ? "service" : "client";
  s.stats.topic = service;
  s.stats.node = fqn_of(f.node);
  name_slot(r, s, f, runtime::entity_label(kind, 0, s.stats.topic));
  s.bind_node = node_of(f.node);
}

void ChainExecutor::describe(const Rebuild& r, Slot& slot, const ::rclcpp::SubscriptionBase::SharedPtr& sub,
                             const FoundGroup& f) {
  Slot* s = &slot;
  s->sub = sub;
  s->stats.kind = "subscription";
  s->stats.topic = sub->get_topic_name();
  s->stats.node = fqn_of(f.node);
  s->depth = static_cast<std::int64_t>(sub->get_actual_qos().depth());
  s->bind_node = node_of(f.node);
  // another live subscription of this node to this topic, found before (a slot made again for
  // the same entity, on a rebind, is not another)
  auto earlier = [&](const Slot& o) {
    const auto e = o.sub.lock();
    return &o != s && o.kind == Kind::Subscription && !o.ipc && e && e != sub && o.stats.node == s->stats.node &&
           o.stats.topic == s->stats.topic;
  };
  const bool first =
      std::none_of(all_slots_.begin(), all_slots_.end(), [&](auto& o) { return o->id != kNoCallback && earlier(*o); }) &&
      std::none_of(r.made.begin(), r.made.end(), [&](auto& o) { return earlier(*o); });
  const bool default_group = f.node && f.group == f.node->get_default_callback_group();
  s->listed = !rclcpp_own_subscription(s->stats.topic, default_group, first);
  // rclcpp's own subscription is named apart, so that a user's own subscription to the topic
  // keeps the plain name on every line
  name_slot(r, *s, f, s->listed ? runtime::entity_label(CallbackKind::Subscription, 0, s->stats.topic)
                                : "time_source:" + s->stats.topic);
}

void ChainExecutor::describe(const Rebuild& r, Slot& slot, const ::rclcpp::TimerBase::SharedPtr& tm,
                             const FoundGroup& f) {
  Slot* s = &slot;
  s->timer = tm;
  s->handle = tm->get_timer_handle();
  s->steady = tm->is_steady();
  std::int64_t period = 0;
  if (rcl_timer_get_period(s->handle.get(), &period) != RCL_RET_OK) rcl_reset_error();
  s->clock.period = period;
  s->stats.kind = "timer";
  s->stats.node = fqn_of(f.node);
  name_slot(r, *s, f, runtime::entity_label(CallbackKind::Timer, period, ""));
  s->bind_node = node_of(f.node);
  for (std::size_t t = 0; t < threads_spec_.size(); ++t) s->info.push_back(std::make_shared<rcl_timer_call_info_t>());
}

void ChainExecutor::describe(const Rebuild& r, Slot& slot, const ::rclcpp::Waitable::SharedPtr& w,
                             const FoundGroup& f) {
  Slot* s = &slot;
  s->wt = w;
  s->stats.node = fqn_of(f.node);
  s->bind_node = node_of(f.node);
  if (auto* ipc = dynamic_cast<::rclcpp::experimental::SubscriptionIntraProcessBase*>(w.get())) {
    s->stats.kind = "subscription";
    s->stats.topic = ipc->get_topic_name();
    s->ipc = true;
    s->listed = false;  // listed through its subscription
    name_slot(r, *s, f, "ipc:" + s->stats.topic);
  } else if (dynamic_cast<::rclcpp::EventHandlerBase*>(w.get())) {
    s->stats.kind = "event";
    s->listed = false;
    name_slot(r, *s, f, "qos_event");
  } else {
    s->stats.kind = "waitable";
    name_slot(r, *s, f, "waitable");
  }
#if CHAINRT_RCLCPP_WAITABLE_GET_TIMERS
  for (auto& t : w->get_timers())
    if (t) s->wt_timers.push_back(t->get_timer_handle());
#endif
}

// Bind new slots to the model: explicit bindings, then the rule; an intra-process
// subscription is the model callback of its subscription.
void ChainExecutor::match_slots(Rebuild& r) {
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
  for (Slot* s : r.live)
    if (std::find(r.created.begin(), r.created.end(), s) == r.created.end()) {
      if (s->model_id) binder_->by_name(binder_->callback(*s->model_id).name);
      if (auto e = real_of(s)) binder_->see(*e);
    }
  for (Slot* s : r.created)
    for (auto& [name, key] : explicit_)
      if (key == s->key) {
        s->model_id = binder_->by_name(name);
        if (!s->model_id) r.notes.push_back("bind(): the model has no callback '" + name + "'");
        if (auto e = real_of(s)) binder_->see(*e);
      }
  for (Slot* s : r.created)  // the model of marks in code names each entity it has
    for (auto& [key, name] : code_names_)
      if (key == s->key && !s->model_id) {
        s->model_id = binder_->by_name(name);
        if (auto e = real_of(s)) binder_->see(*e);
      }
  for (Slot* s : r.created)
    if (auto e = real_of(s); e && !s->model_id) s->model_id = binder_->match(*e);
  for (Slot* s : r.created)
    if (s->ipc && !s->model_id)
      for (Slot* o : r.live)
        if (o->kind == Kind::Subscription && o->model_id && o->bind_node == s->bind_node &&
            o->stats.topic == s->stats.topic)
          s->model_id = o->model_id;
  for (Slot* s : r.created)
    if (s->model_id) {
      const std::string name = binder_->callback(*s->model_id).name;
      s->stats.name = s->ipc ? name + "@ipc" : name;
      s->mcb = &bound_->cbs[*s->model_id];
      // Instances are handed over when a predecessor starts, whether or not it publishes (a node
      // fusing two inputs publishes once per pair): a keep-last subscription holds at most
      // `depth` messages, so more waiting instances are of lost or unpublished messages (and
      // keep_own drops those beyond the messages that wait).
      if (s->kind == Kind::Subscription && !s->ipc && s->depth > 0) {
        s->mcb->depth = static_cast<std::size_t>(s->depth);
        s->mcb->inputs.cap(s->mcb->depth);
      }
      if (s->ipc) s->mcb->ipc_twin = true;  // (keep_own: its messages are not counted on the subscription)
    }
}

// The new tables: bound callbacks in model order (the simulator's registration order), then
// the others in the order found; their specs and the dispatcher.
std::unique_ptr<ChainExecutor::Tables> ChainExecutor::make_tables(Rebuild& r) {
  const std::size_t nthreads = threads_spec_.size();
  auto T = std::make_unique<Tables>();
  std::vector<Slot*> order = r.live;
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
    if (s->model_id) {
      const sched::CallbackSpec& ms = binder_->setup().specs[*s->model_id];
      spec.priority = ms.priority;
      spec.affinity = (ms.affinity & all) ? ms.affinity : sched::kAnyThread;
      if (*s->model_id < lame_params_.size() && lame_params_[*s->model_id]) {  // LaME's decision
        const LameParams& lp = *lame_params_[*s->model_id];
        spec.priority = lp.priority;
        spec.affinity = (lp.affinity & all) ? lp.affinity : sched::kAnyThread;
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
  T->groups = lanes(T->slots, specs);
  std::vector<bool> rt;
  for (const auto& ts : threads_spec_) rt.push_back(ts.role == CriticalityClass::RealTime);
  T->dispatcher = std::make_unique<sched::Dispatcher>(policy_, std::move(specs), T->groups, std::move(rt),
                                                      options_.wait_set_seed);
  return T;
}

std::vector<sched::GroupSpec> ChainExecutor::lanes(const std::vector<Slot*>& slots,
                                                   std::vector<sched::CallbackSpec>& specs) const {
  // a lane is (rclcpp's group, LaME's group within it); -1: the whole rclcpp group
  std::vector<std::pair<const void*, std::int64_t>> keys;
  std::vector<sched::GroupSpec> groups;
  for (std::size_t i = 0; i < slots.size(); ++i) {
    const Slot* s = slots[i];
    std::int64_t split = -1;
    if (!s->reentrant && s->model_id && *s->model_id < lame_params_.size() && lame_params_[*s->model_id])
      split = lame_params_[*s->model_id]->group;
    const std::pair<const void*, std::int64_t> key{s->group_key, split};
    auto g = std::find(keys.begin(), keys.end(), key);
    if (g == keys.end()) {
      keys.push_back(key);
      groups.push_back(sched::GroupSpec{s->reentrant ? GroupType::Reentrant : GroupType::MutuallyExclusive});
      g = keys.end() - 1;
    }
    specs[i].group = static_cast<sched::GroupId>(g - keys.begin());
  }
  if (groups.empty()) groups.push_back(sched::GroupSpec{});
  return groups;
}

// New entities: timers armed, wait sets for waitables with timers.
void ChainExecutor::prepare_created(Rebuild& r) {
  const Duration now = clock_now();
  for (Slot* s : r.created) {
    if (s->kind == Kind::Timer && s->steady && arm(*s, now, true) > 0)
      r.notes.push_back("timer '" + s->stats.name + "' was armed after its first release on the release grid: it "
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
          r.notes.push_back("'" + s->stats.name + "': its timers cannot be waited for; it runs on its events only");
        }
      }
    }
  }
}

// Swap the tables in under the lock (running instances carried over, pending work released in
// the new ones), then the event callbacks (rcl reports the events that arrived before at once;
// they are counted, the slot enlisted).
void ChainExecutor::install_tables(Rebuild& r, std::unique_ptr<Tables> T) {
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
    for (auto& sp : r.made) {
      sp->mon = static_cast<std::uint32_t>(all_slots_.size());
      monitor_names_.push_back(sp->stats.name);
      all_slots_.push_back(std::move(sp));
    }
    for (auto& n : r.notes) warnings_.push_back(std::move(n));
    // Running instances keep their group busy in the new queue (a removed entity's instance
    // keeps the group of its successor slot busy when the group stays).
    for (sched::ThreadId t = 0; t < running_.size(); ++t) {
      Running& run = running_[t];
      if (!run.slot) continue;
      run.qid = run.slot->id;
      if (run.qid == kNoCallback && !run.slot->reentrant)
        for (Slot* s : T->slots)
          if (s->group_key == run.slot->group_key) run.qid = s->id;
      if (run.qid != kNoCallback && t < T->dispatcher->thread_count()) T->dispatcher->resume(t, run.qid);
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
  for (Slot* s : r.created) install(*s);
  wake_others();
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
    if (auto sub = s.sub.lock()) sub->clear_on_new_message_callback();
    if (auto srv = s.srv.lock()) srv->clear_on_new_request_callback();
    if (auto cli = s.cli.lock()) cli->clear_on_new_response_callback();
    if (auto wt = s.wt.lock()) wt->clear_on_ready_callback();
    if (auto tm = s.timer.lock()) tm->clear_on_reset_callback();
  } catch (...) {
  }
}

}  // namespace chainrt::rclcpp
