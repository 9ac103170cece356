// chainrt._core, part "model": the model types, loading with diagnostics, saving, validation.
// Enumerations travel as their file-format strings ("timer", "edf", "intra_process", ...).
// Lists are returned as copies: edit a list and assign it back (model.callbacks = cbs).
#include <nanobind/stl/optional.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <stdexcept>

#include "chainrt/model/accelerator.hpp"
#include "chainrt/model/facts.hpp"
#include "chainrt/model/limits.hpp"
#include "chainrt/model/model.hpp"
#include "chainrt/model/units.hpp"
#include "chainrt/model/yaml_io.hpp"
#include "registry.hpp"

namespace nb = nanobind;
using namespace chainrt;

namespace {

template <class E>
E enum_from(std::optional<E> v, const std::string& s, const char* what) {
  if (!v) throw std::invalid_argument(std::string("unknown ") + what + " '" + s + "'");
  return *v;
}

nb::list diagnostics_list(const std::vector<Diagnostic>& diags) {
  nb::list out;
  for (const auto& d : diags) {
    nb::dict x;
    x["file"] = d.file;
    x["line"] = d.line;
    x["column"] = d.column;
    x["field"] = d.field;
    x["message"] = d.message;
    x["text"] = d.str();
    out.append(x);
  }
  return out;
}

// (model or None, diagnostics): the Python side raises chainrt.ModelError from the list.
template <class F>
nb::tuple load_with(F&& load) {
  try {
    return nb::make_tuple(nb::cast(load()), nb::list());
  } catch (const ModelError& e) {
    return nb::make_tuple(nb::none(), diagnostics_list(e.diagnostics()));
  }
}

// The platform: reservations, hosts, threads and executors.
void register_platform(nb::module_& m) {
  nb::class_<Reservation>(m, "Reservation")
      .def(nb::init<>())
      .def_rw("budget", &Reservation::budget)
      .def_rw("period", &Reservation::period);
  nb::class_<BlackoutPoint>(m, "BlackoutPoint")
      .def(nb::init<>())
      .def("__init__", [](BlackoutPoint* p, Duration window, Duration max) { new (p) BlackoutPoint{window, max}; },
           nb::arg("window"), nb::arg("max"))
      .def_rw("window", &BlackoutPoint::window)
      .def_rw("max", &BlackoutPoint::max);
  nb::class_<Host>(m, "Host")
      .def(nb::init<>())
      .def_rw("name", &Host::name)
      .def_rw("cores", &Host::cores)
      .def_rw("blackout", &Host::blackout);
  nb::class_<ThreadClass>(m, "ThreadClass")
      .def(nb::init<>())
      .def_rw("name", &ThreadClass::name)
      .def_prop_rw("kind", [](const ThreadClass& t) { return std::string(to_string(t.kind)); },
                   [](ThreadClass& t, const std::string& s) { t.kind = enum_from(criticality_class_from(s), s, "thread class kind"); })
      .def_rw("cores", &ThreadClass::cores)
      .def_rw("fifo_priority", &ThreadClass::fifo_priority)
      .def_rw("reservation", &ThreadClass::reservation);
  nb::class_<Thread>(m, "Thread")
      .def(nb::init<>())
      .def_rw("name", &Thread::name)
      .def_rw("cores", &Thread::cores)
      .def_rw("fifo_priority", &Thread::fifo_priority)
      .def_rw("reservation", &Thread::reservation)
      .def_rw("thread_class", &Thread::thread_class);
  nb::class_<Executor>(m, "Executor")
      .def(nb::init<>())
      .def_rw("name", &Executor::name)
      .def_rw("host", &Executor::host)
      .def_rw("process", &Executor::process)
      .def_prop_rw("policy", [](const Executor& e) { return std::string(to_string(e.policy)); },
                   [](Executor& e, const std::string& s) { e.policy = enum_from(policy_from(s), s, "policy"); })
      .def_rw("priority", &Executor::priority)
      .def_rw("threads", &Executor::threads)
      .def_rw("thread_classes", &Executor::thread_classes)
      .def_rw("dispatch_overhead", &Executor::dispatch_overhead,
              "The executor thread's own time per dispatched callback beyond its WCET (ns); every analysis "
              "and the simulator charge each callback [BCET, WCET + dispatch_overhead].")
      .def("thread_fifo_priority", &thread_fifo_priority, nb::arg("thread"),
           "The SCHED_FIFO priority `thread` of this executor runs at (model/facts.hpp): its own, else the "
           "executor's (1..99); None for SCHED_OTHER and for a thread with a reservation.");
}

// The callback graph: nodes, groups, topics, services, callbacks, hops and chains.
void register_graph(nb::module_& m) {
  nb::class_<Node>(m, "Node").def(nb::init<>()).def_rw("name", &Node::name).def_rw("executor", &Node::executor);
  nb::class_<CallbackGroup>(m, "CallbackGroup")
      .def(nb::init<>())
      .def_rw("name", &CallbackGroup::name)
      .def_prop_rw("type", [](const CallbackGroup& g) { return std::string(to_string(g.type)); },
                   [](CallbackGroup& g, const std::string& s) { g.type = enum_from(group_type_from(s), s, "group type"); })
      .def_rw("node", &CallbackGroup::node);
  nb::class_<Topic>(m, "Topic")
      .def(nb::init<>())
      .def_rw("name", &Topic::name)
      .def_rw("size", &Topic::size)
      .def_rw("service", &Topic::service);  // non-empty: derived from a service (not in the file)
  nb::class_<Service>(m, "Service")
      .def(nb::init<>())
      .def_rw("name", &Service::name)
      .def_rw("request_size", &Service::request_size)
      .def_rw("response_size", &Service::response_size);
  nb::class_<Callback>(m, "Callback")
      .def(nb::init<>())
      .def_rw("name", &Callback::name)
      .def_prop_rw("kind", [](const Callback& c) { return std::string(to_string(c.kind)); },
                   [](Callback& c, const std::string& s) { c.kind = enum_from(callback_kind_from(s), s, "callback kind"); })
      .def_rw("node", &Callback::node)
      .def_rw("group", &Callback::group)
      .def_rw("wcet", &Callback::wcet)
      .def_rw("bcet", &Callback::bcet)
      .def_rw("priority", &Callback::priority)
      .def_rw("affinity", &Callback::affinity)
      .def_rw("period", &Callback::period)
      // (num, den): the period as num/den ns when the model gives it as a rate or a fraction
      // ("30 Hz", "1/30 s"); None for a whole number of ns
      .def_prop_rw(
          "exact_period",
          [](const Callback& c) -> std::optional<std::pair<Duration, std::int64_t>> {
            if (!c.exact_period) return std::nullopt;
            return std::pair{c.exact_period->num, c.exact_period->den};
          },
          [](Callback& c, std::optional<std::pair<Duration, std::int64_t>> v) {
            if (v) c.exact_period = ExactPeriod{v->first, v->second};
            else c.exact_period.reset();
          },
          nb::arg("value").none())
      .def_rw("offset", &Callback::offset)
      .def_rw("jitter", &Callback::jitter)
      .def_prop_rw("phase", [](const Callback& c) { return std::string(to_string(c.phase)); },
                   [](Callback& c, const std::string& s) { c.phase = enum_from(timer_phase_from(s), s, "timer phase"); })
      .def_rw("period_tolerance", &Callback::period_tolerance)
      .def_rw("topic", &Callback::topic)
      .def_rw("service", &Callback::service)
      .def_rw("calls", &Callback::calls)
      .def_rw("queue_depth", &Callback::queue_depth)
      .def_rw("fuses", &Callback::fuses)
      .def_rw("publishes", &Callback::publishes);
  nb::class_<Hop>(m, "Hop")
      .def(nb::init<>())
      .def_rw("from_", &Hop::from)
      .def_rw("to", &Hop::to)
      .def_rw("topic", &Hop::topic)
      .def_prop_rw("comm", [](const Hop& h) { return std::string(to_string(h.comm)); },
                   [](Hop& h, const std::string& s) { h.comm = enum_from(comm_kind_from(s), s, "communication kind"); })
      .def_rw("message_size", &Hop::message_size)
      .def_prop_ro("kind", [](const Hop& h) { return std::string(to_string(h.kind)); });
  nb::class_<Chain>(m, "Chain")
      .def(nb::init<>())
      .def_rw("name", &Chain::name)
      .def_rw("callbacks", &Chain::callbacks)
      .def_rw("hops", &Chain::hops)
      .def_rw("period", &Chain::period)
      .def_rw("deadline", &Chain::deadline)
      .def_prop_rw("criticality_class", [](const Chain& c) { return std::string(to_string(c.criticality_class)); },
                   [](Chain& c, const std::string& s) { c.criticality_class = enum_from(criticality_class_from(s), s, "chain class"); })
      .def_rw("criticality", &Chain::criticality)
      .def_rw("priority", &Chain::priority)
      .def("is_linear", &Chain::is_linear)
      .def("paths", &Chain::paths);
}

// The Model itself, its loaders and the duration helpers.
void register_model(nb::module_& m) {
  nb::class_<Model>(m, "Model")
      .def(nb::init<>())
      .def_rw("name", &Model::name)
      .def_rw("constrained_deadlines", &Model::constrained_deadlines)
      .def_rw("hosts", &Model::hosts)
      .def_rw("executors", &Model::executors)
      .def_rw("nodes", &Model::nodes)
      .def_rw("groups", &Model::groups)
      .def_rw("topics", &Model::topics)
      .def_rw("services", &Model::services)
      .def_rw("callbacks", &Model::callbacks)
      .def_rw("chains", &Model::chains)
      .def("callback", &Model::callback, nb::rv_policy::copy)
      .def("chain", &Model::chain, nb::rv_policy::copy)
      .def("executor_of", &Model::executor_of, nb::rv_policy::copy)
      .def("chain_wcet", &Model::chain_wcet)
      .def("chain_utilisation", &Model::chain_utilisation)
      .def("to_yaml", &save_model_to_string)
      .def("save", &save_model)
      .def("__eq__", [](const Model& a, const Model& b) { return a == b; })
      .def("_validate", [](Model& model, const std::string& file) {
        try {
          validate(model, file);
          return nb::list();
        } catch (const ModelError& e) {
          return diagnostics_list(e.diagnostics());
        }
      });
  // The model as it runs (model/accelerator.hpp): a callback with server-mode accelerator
  // segments as its pieces "<name>", "<name>#1", ..., the chains listing them; what the runtime's
  // dispatch traces name. A model without such segments comes back as it is.
  m.def("_expand_accelerators", [](const Model& model) { return expand_accelerators(model).model; });
  // model/facts.hpp: whether the simulator's placement and the kernel's global scheduling of
  // unpinned threads may differ (then a worst case is simulated both ways).
  m.def("_unpinned_threads_share_cores", &unpinned_threads_share_cores);
  m.def("_load_model", [](const std::string& path) { return load_with([&] { return load_model(path); }); });
  m.def("_load_model_from_string", [](const std::string& text, const std::string& file) {
    return load_with([&] { return load_model_from_string(text, file); });
  });
  m.def("parse_duration", [](const std::string& s) {
    std::string why;
    auto v = parse_duration(s, &why);
    if (!v) throw std::invalid_argument(why);
    return *v;
  });
  // The model's limits that the command line checks too (cliargs: a period it writes into a plan).
  m.attr("MIN_PERIOD_NS") = limits::kMinPeriod;
  m.attr("MAX_DURATION_NS") = limits::kMaxDuration;
  m.def("format_duration", &format_duration);
  m.def("pretty_duration", &pretty_duration);
}

}  // namespace

CHAINRT_BINDINGS(model, 0) {
  register_platform(m);
  register_graph(m);
  register_model(m);
}
