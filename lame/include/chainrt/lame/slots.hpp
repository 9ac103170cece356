// chainrt lame: LaME's plans on fixed thread slots — what an executor built once runs while its
// plans change. A plan's thread classes change shape (RT classes merge, an empty RT class is
// dropped) while an executor's threads are fixed when it is built, so the executor runs the
// paper's initial structure (Algorithm 2, lines 3-8) for good — one RT slot "rt@k" (slot k) and
// one BE slot "be@k" (slot cores + k) per core k — and a plan is mapped onto it: the thread of
// class X on core k runs on slot (kind of X, k); X's callbacks may run on exactly the slots of
// X's threads; a slot no class uses gets normal scheduling and no callback. Shared by the
// runtime's controller (runtime/lame_controller.hpp), chainrt.rclpy's and the simulator's
// (sim_control.hpp).
//
// Contract: pure functions; they allocate.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "chainrt/lame/lame.hpp"
#include "chainrt/sched/ready_queue.hpp"

namespace chainrt::lame {

// A plan on the slots: the reservation of every slot, and per callback of the planned executor
// (sched::make_setup order) its scheduling parameters with the affinity mask over the slots.
struct SlotPlan {
  std::vector<std::optional<Reservation>> slots;   // 2 * cores
  std::vector<std::string> callbacks;              // model callback names
  std::vector<sched::CallbackSpec> specs;          // by index into `callbacks`
  std::vector<sched::GroupSpec> groups;
};
SlotPlan slot_plan(const Allocation& plan, std::size_t executor_index, int cores);
// The cores a plan's thread classes span (at least 1).
int plan_cores(const Allocation& plan);
// "rt@k" / "be@k": slot `slot`'s thread name.
std::string slot_name(int slot, int cores);

}  // namespace chainrt::lame
