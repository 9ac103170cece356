// chainrt runtime: the accelerator client and the process's registry of accelerators
// (accelerator_client.hpp).
#include "chainrt/runtime/accelerator_client.hpp"

#include <algorithm>
#include <mutex>
#include <stdexcept>
#include <string>
#include <vector>

namespace chainrt::runtime {

namespace {

struct Registry {
  std::mutex m;
  std::vector<std::shared_ptr<SharedAccelerator>> all;

  // The one lookup by name; the caller holds `m`. Allocates nothing.
  auto named(std::string_view name) noexcept {
    return std::find_if(all.begin(), all.end(), [&](const auto& a) { return a->options().name == name; });
  }
};

Registry& registry() {
  static Registry r;  // never destroyed before a static user's calls end (function-local)
  return r;
}

}  // namespace

void register_accelerator(std::shared_ptr<SharedAccelerator> acc) {
  if (!acc) throw std::invalid_argument("register_accelerator: no accelerator");
  const std::string& name = acc->options().name;
  if (name.empty()) throw std::invalid_argument("register_accelerator: an accelerator needs a name");
  Registry& r = registry();
  std::lock_guard<std::mutex> lk(r.m);
  if (r.named(name) != r.all.end()) throw std::invalid_argument("an accelerator named '" + name + "' exists already");
  r.all.push_back(std::move(acc));
}

std::shared_ptr<SharedAccelerator> add_accelerator(AcceleratorOptions options, std::unique_ptr<DeviceBackend> device) {
  if (!device) device = std::make_unique<EmulatedDevice>();
  auto acc = std::make_shared<SharedAccelerator>(std::move(options), std::move(device));
  register_accelerator(acc);
  return acc;
}

bool unregister_accelerator(std::string_view name) {
  Registry& r = registry();
  std::lock_guard<std::mutex> lk(r.m);
  const auto it = r.named(name);
  if (it == r.all.end()) return false;
  r.all.erase(it);
  return true;
}

std::shared_ptr<SharedAccelerator> find_accelerator(std::string_view name) noexcept {
  Registry& r = registry();
  std::lock_guard<std::mutex> lk(r.m);
  const auto it = r.named(name);
  return it == r.all.end() ? nullptr : *it;
}

void run_on_accelerator(SharedAccelerator& acc, const DeviceWork& work, std::optional<std::uint32_t> site) {
  const DispatchContext* d = current_dispatch();
  const std::uint32_t s = site ? *site : (d ? d->callback : 0);
  // direct: first come, first served; server: at the dispatch's priority; the thread blocks
  // (a full queue: call() throws)
  if (!acc.call(s, 0, work, d ? d->priority : std::nullopt))
    throw std::runtime_error("accelerator '" + acc.options().name + "' was stopped, or its server process ended, "
                             "before the request ran");
}

void submit_on_accelerator(SharedAccelerator& acc, const DeviceWork& work, SharedAccelerator::Completion then,
                           void* context, std::uint64_t token, std::optional<std::uint32_t> site) {
  const DispatchContext* d = current_dispatch();
  const std::uint32_t s = site ? *site : (d ? d->callback : 0);
  if (!acc.submit(d ? d->priority : std::nullopt, s, 0, work, then, context, token))
    throw std::runtime_error("accelerator '" + acc.options().name + "': more than " +
                             std::to_string(acc.options().capacity) +
                             " requests queued at once, or it was stopped, or its server process ended");
}

void submit_on_accelerator(std::string_view accelerator, const DeviceWork& work, SharedAccelerator::Completion then,
                           void* context, std::uint64_t token, std::optional<std::uint32_t> site) {
  const std::shared_ptr<SharedAccelerator> acc = find_accelerator(accelerator);
  if (!acc) throw std::invalid_argument("no accelerator named '" + std::string(accelerator) + "' (add_accelerator makes one)");
  submit_on_accelerator(*acc, work, then, context, token, site);
}

void run_on_accelerator(std::string_view accelerator, const DeviceWork& work, std::optional<std::uint32_t> site) {
  const std::shared_ptr<SharedAccelerator> acc = find_accelerator(accelerator);
  if (!acc) throw std::invalid_argument("no accelerator named '" + std::string(accelerator) + "' (add_accelerator makes one)");
  run_on_accelerator(*acc, work, site);
}

}  // namespace chainrt::runtime
