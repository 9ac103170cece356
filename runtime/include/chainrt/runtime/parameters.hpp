// chainrt runtime: node parameters, as a rclcpp user knows them. A parameter is declared with a
// default; an override given at start-up wins: `--ros-args -p name:=value` and
// `--ros-args --params-file file.yaml` (rcl's parser; node-name keys and `/**` wildcards as in
// ROS 2), global (the Context's arguments) or for this node only. get/set at run time, with
// validators that may refuse a change; the standard parameter services
// (<node>/get_parameters, set_parameters, set_parameters_atomically, list_parameters,
// describe_parameters, get_parameter_types) so `ros2 param`-style tools talk to the node.
//
// Thread-safety: every member is thread-safe (one mutex per node). get/set copy values and may
// allocate: read parameters into plain variables before start() or in a callback that is not
// on a latency-critical chain. The services are dispatched by the executor like any service
// (default priority: the lowest; give one with enable_services(options)).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <variant>
#include <vector>

#include "chainrt/runtime/node.hpp"

namespace chainrt::runtime {

// The rcl_interfaces/ParameterType order: index() == ParameterType value.
using ParameterValue =
    std::variant<std::monostate, bool, std::int64_t, double, std::string, std::vector<std::uint8_t>,
                 std::vector<bool>, std::vector<std::int64_t>, std::vector<double>,
                 std::vector<std::string>>;
// "bool", "integer", "double", "string", "byte_array", ... ("not set" for monostate)
const char* parameter_type_name(const ParameterValue& v) noexcept;
std::string to_string(const ParameterValue& v);

struct ParameterDescriptor {
  std::string description;
  bool read_only = false;
  bool dynamic_typing = false;  // allow set() to change the type
};

struct SetParameterResult {
  bool successful = true;
  std::string reason;
};

class Parameters {
 public:
  // Reads the overrides of `node` (its fully qualified name) from the Context's and the node's
  // arguments. Throws std::runtime_error when rcl cannot parse them.
  explicit Parameters(Node& node);
  ~Parameters();
  Parameters(const Parameters&) = delete;
  Parameters& operator=(const Parameters&) = delete;

  // Declare `name`: the override when one was given, else `default_value`. Returns the value.
  // Throws std::invalid_argument when `name` was declared before, or when the override's
  // type differs from the default's (an integer override of a double is converted).
  ParameterValue declare(const std::string& name, ParameterValue default_value,
                         ParameterDescriptor descriptor = {});
  template <class T>
  T declare_parameter(const std::string& name, T default_value, ParameterDescriptor d = {}) {
    return as<T>(name, declare(name, ParameterValue(normalize(std::move(default_value))), std::move(d)));
  }
  bool has(const std::string& name) const;
  // Throws std::out_of_range when `name` was not declared.
  ParameterValue get(const std::string& name) const;
  template <class T>
  T get_parameter(const std::string& name) const {
    return as<T>(name, get(name));
  }
  // Runs the validators; refuses undeclared names, read-only parameters and type changes.
  SetParameterResult set(const std::string& name, const ParameterValue& value);
  // All or nothing.
  SetParameterResult set_atomically(const std::vector<std::pair<std::string, ParameterValue>>& values);
  // Validators run before a change is applied; a refusal keeps the old value.
  using Validator = std::function<SetParameterResult(const std::string&, const ParameterValue&)>;
  void add_validator(Validator v);
  // Called after a change was applied (rclcpp's post-set callbacks), outside the lock, on the
  // thread that called set(); e.g. the node's `use_sim_time` switching its time source. An
  // exception it throws is reported on stderr and the value stays set.
  using OnChange = std::function<void(const std::string&, const ParameterValue&)>;
  void add_on_change(OnChange f);
  std::vector<std::string> names() const;
  ParameterDescriptor descriptor(const std::string& name) const;
  // Whether an override for `name` was given at start-up.
  bool has_override(const std::string& name) const;

  // Create the standard parameter services on the node (before the executor's prepare()).
  void enable_services(CallbackOptions options = {});

 private:
  template <class T>
  static auto normalize(T v) {
    if constexpr (std::is_same_v<T, const char*>) return std::string(v);
    else if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) return static_cast<std::int64_t>(v);
    else if constexpr (std::is_same_v<T, float>) return static_cast<double>(v);
    else return v;
  }
  template <class T>
  static T as(const std::string& name, const ParameterValue& v) {
    using N = decltype(normalize(std::declval<T>()));
    if (const N* p = std::get_if<N>(&v)) return static_cast<T>(*p);
    throw std::invalid_argument("parameter '" + name + "' is of type " + parameter_type_name(v));
  }
  struct Entry {
    std::string name;
    ParameterValue value;
    ParameterDescriptor descriptor;
  };
  Entry* find(const std::string& name);
  const Entry* find(const std::string& name) const;
  SetParameterResult check(const Entry* e, const std::string& name, const ParameterValue& v) const;

  Node* node_;
  mutable std::mutex mutex_;
  std::vector<Entry> entries_;
  std::vector<Validator> validators_;
  std::vector<OnChange> on_change_;
  std::vector<std::pair<std::string, ParameterValue>> overrides_;
  std::vector<std::shared_ptr<Entity>> services_;
};

}  // namespace chainrt::runtime
