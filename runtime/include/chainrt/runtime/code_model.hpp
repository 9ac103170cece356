// chainrt runtime: the model of a system marked in code. A user of chainrt's rclcpp or rclpy
// ChainExecutor may, instead of (or beside) a model file, mark entities in the node's own code
// or at composition time: a callback's priority, name and WCET, a chain of entities with its
// period, deadline, criticality and chain priority, a callback group's executor thread (cores,
// SCHED_FIFO priority). model_from_code turns those marks and the executor's entities into the
// model library's Model (validated as a loaded file is), so that the executor binds and
// schedules by it with the code it uses for a model file (EntityBinder, sched::make_setup) and
// save_model (model/yaml_io.hpp) writes it for `chainrt check` / `analyze` / `simulate`.
// Written once here and used by both executors (rclpy through chainrt._rclpy_exec).
//
// The model: one host, one executor (`executor`, policy `policy`), the marked threads (else
// `plain_threads` plain ones), the entities' nodes, their non-default callback groups, every
// entity as a callback in the order given (the callers give them node by node in the order
// added, timers, subscriptions, services, clients: the registration order, the ready queue's last
// tie-break), topics and services they use, and the marked chains. A chain's hops are derived
// as a file's: consecutive members A -> B make A publish B's topic (B a subscription) or call
// B's service (B a service).
//
// With a model file (`base`), the file wins where both speak: an entity the file binds keeps
// the file's callback (its name, WCET, chains; the code's priority and thread apply only where
// the file has none); a chain the file names is the file's; a marked entity the file does not
// describe is added to the file's executor, with its node; unmarked entities the file does not
// describe stay outside the model (they run last, as without marks). Every mark the file
// overrides is reported in `notes`.
//
// WCETs: the mark's, else `measured` (the monitor's largest CPU time of that entity, 0: none).
// An entity with neither is listed in `unknown_wcet` and, unless `require_wcet`, given 1 ns in
// the model: the policies that order the executor's ready queue (all but lame) never read a
// callback's WCET, and LaME's planner (which does) is not run on marks.
// save_model asks for them (require_wcet: std::invalid_argument naming each).
//
// Off the dispatch path; allocates; throws std::invalid_argument (a mark that names nothing of
// the executor) or ModelError (the resulting model is invalid: the file's one-line reasons).
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "chainrt/model/model.hpp"

namespace chainrt::runtime {

// One entity of the executor (a timer, subscription, service or client) with its marks.
struct CodeEntity {
  std::string node;              // the model node: the fully qualified name without the leading '/'
  CallbackKind kind = CallbackKind::Timer;
  Duration period = 0;           // timers
  std::string topic;             // a subscription's topic, a service's or client's service name
  std::string group;             // its callback group: "" the node's default, else any token unique
                                 // to the group (the model names a node's other groups
                                 // "<node>/group<k>", k counting them as the entities show them)
  bool reentrant = false;        // ... a reentrant group
  std::string bound;             // with a model file: the file's callback it is bound to
  Duration measured = 0;         // the monitor's largest CPU time so far (0: none)
  // marks
  bool marked = false;           // the user marked it (or it is in a chain)
  std::string name;              // "": "<node>/<entity_label>" (the executors' unmatched name)
  std::optional<int> priority;
  Duration wcet = 0;             // 0: not given
  std::string thread;            // the executor thread it runs on ("": any)
};

struct CodeThread {
  std::string name;
  std::vector<int> cores;
  std::optional<int> fifo_priority;
};

struct CodeChain {
  std::string name;
  std::vector<std::size_t> entities;  // indices into CodeMarks::entities, source first
  Duration period = 0;                // 0: the source timer's
  Duration deadline = 0;              // 0: the period
  CriticalityClass criticality_class = CriticalityClass::RealTime;
  int criticality = 0;
  std::optional<int> priority;
};

struct CodeMarks {
  std::vector<CodeEntity> entities;
  std::vector<CodeThread> threads;
  std::vector<CodeChain> chains;
  std::string executor;          // the executor's name ("": "main"; with a file: the bound one)
  Policy policy = Policy::RosDefault;
  int plain_threads = 1;         // without marked threads
  int host_cores = 1;
};

struct CodeModel {
  Model model;
  std::vector<std::string> names;         // by entity: its model callback ("": not in the model)
  std::vector<std::string> notes;         // marks the model file overrides
  std::vector<std::string> unknown_wcet;  // callbacks without a WCET (neither marked nor measured)
};

CodeModel model_from_code(const CodeMarks& marks, const Model* base = nullptr, bool require_wcet = false);

}  // namespace chainrt::runtime
