// chainrt rclcpp: what the ChainExecutor reports and what a controller changes — LaME, the
// statistics messages and events, runtime::ControlledExecutor, the run report.
#include "chain_executor_state.hpp"

namespace chainrt::rclcpp {

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
  return tables_->dispatcher->spec(id);
}

std::string ChainExecutor::set_thread_reservation(sched::ThreadId t, const std::optional<Reservation>& r) {
  const int tid = t < tids_.size() ? tids_[t].load() : 0;
  if (tid == 0) return "executor thread " + std::to_string(t) + " is not running";
  return runtime::set_thread_reservation(tid, r);
}

// Priorities and affinities as runtime::Executor::reconfigure takes them; the groups are
// rclcpp's, a mutually exclusive one split where the specs' groups (LaME's plan) split it (lanes()).
void ChainExecutor::reconfigure(std::vector<sched::CallbackSpec> specs, std::vector<sched::GroupSpec>) {
  std::unique_lock<runtime::PiMutex> lk(mutex_);
  if (!tables_ || specs.size() != tables_->slots.size())
    throw std::invalid_argument("reconfigure: " + std::to_string(specs.size()) + " callback specs for " +
                                std::to_string(tables_ ? tables_->slots.size() : 0) + " callbacks");
  Tables& T = *tables_;
  std::vector<sched::CallbackSpec> next;
  for (CallbackId id = 0; id < specs.size(); ++id) {
    sched::CallbackSpec sp = T.dispatcher->spec(id);  // kind, wait-set position stay
    sp.priority = specs[id].priority;
    sp.affinity = specs[id].affinity;
    next.push_back(sp);
    const Slot* s = T.slots[id];
    if (s->model_id) {
      if (lame_params_.size() <= *s->model_id) lame_params_.resize(*s->model_id + 1);
      lame_params_[*s->model_id] = LameParams{sp.priority, sp.affinity, specs[id].group};
    }
  }
  std::vector<sched::GroupSpec> groups = lanes(T.slots, next);
  lk.unlock();
  auto fresh = T.dispatcher->rebuilt(std::move(next), groups);
  lk.lock();
  if (tables_.get() != &T) return;  // rebuilt meanwhile: the rebuild took lame_params_
  T.dispatcher->install(fresh);
  T.groups = std::move(groups);
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
  Duration next = now_ns() + options_.stats_period;
  std::uint64_t published = 0;
  std::vector<std::string> names;  // kept between messages: copying into it reuses its strings
  std::string executor_name = binder_ ? binder_->executor_name() : "rclcpp-" + std::to_string(getpid());
  for (;;) {
    const bool stopping = stats_stop_.load() != 0;
    if (!stopping) {
      const Duration left = next - now_ns();
      if (left > 0) {
        runtime::futex_wait(&stats_stop_, 0, std::min<Duration>(left, kRclTimerCheck));
        continue;
      }
      next += options_.stats_period;
    }
    chainrt_msgs::msg::ChainStats msg;
    runtime::stats_message(report(2048), options_.run_id, executor_name, stats_seq_++, monitor_, published, mutex_,
                           names, [&](std::vector<std::string>& to) { to = monitor_names_; }, msg);
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
  r.duration_ns = started_at_ ? now_ns() - started_at_ : 0;
  r.dispatches = monitor_.dispatches();
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
  // a chain's drops: those of every slot bound to one of its members
  std::vector<std::uint64_t> model_drops(binder_ ? binder_->size() : 0, 0);
  for (const auto& s : all_slots_)
    if (s->model_id && *s->model_id < model_drops.size()) model_drops[*s->model_id] += drops[s->mon];
  monitor_.report(r.chains, max_samples, [&](CallbackId id) { return model_drops[id]; });
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
  return monitor_.trace().snapshot();
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
  monitor_.record_from(clock_now());
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
