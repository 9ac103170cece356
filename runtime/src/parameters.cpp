// chainrt runtime: node parameters and the standard parameter services (see parameters.hpp).
#include "chainrt/runtime/parameters.hpp"

#include <rcl/arguments.h>
#include <rcl/error_handling.h>
#include <rcl_interfaces/msg/parameter_type.hpp>
#include <rcl_interfaces/srv/describe_parameters.hpp>
#include <rcl_interfaces/srv/get_parameter_types.hpp>
#include <rcl_interfaces/srv/get_parameters.hpp>
#include <rcl_interfaces/srv/list_parameters.hpp>
#include <rcl_interfaces/srv/set_parameters.hpp>
#include <rcl_interfaces/srv/set_parameters_atomically.hpp>
#include <rcl_yaml_param_parser/parser.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <regex>

#include "chainrt/runtime/services.hpp"

namespace chainrt::runtime {

const char* parameter_type_name(const ParameterValue& v) noexcept {
  static const char* names[] = {"not set",     "bool",          "integer",      "double",
                                "string",      "byte_array",    "bool_array",   "integer_array",
                                "double_array", "string_array"};
  return names[v.index()];
}

namespace {
struct ValueText {
  std::string operator()(std::monostate) const { return "(not set)"; }
  std::string operator()(bool b) const { return b ? "true" : "false"; }
  std::string operator()(std::int64_t i) const { return std::to_string(i); }
  std::string operator()(double d) const { return std::to_string(d); }
  std::string operator()(const std::string& s) const { return s; }
  template <class T>
  std::string operator()(const std::vector<T>& a) const {
    std::string s = "[";
    for (std::size_t i = 0; i < a.size(); ++i) {
      if (i) s += ", ";
      if constexpr (std::is_same_v<T, std::string>) s += a[i];
      else if constexpr (std::is_same_v<T, bool>) s += a[i] ? "true" : "false";
      else s += std::to_string(a[i]);
    }
    return s + "]";
  }
};
}  // namespace

std::string to_string(const ParameterValue& v) { return std::visit(ValueText{}, v); }

namespace {

ParameterValue from_rcl(const rcl_variant_t& v) {
  if (v.bool_value) return *v.bool_value;
  if (v.integer_value) return static_cast<std::int64_t>(*v.integer_value);
  if (v.double_value) return *v.double_value;
  if (v.string_value) return std::string(v.string_value);
  if (v.byte_array_value)
    return std::vector<std::uint8_t>(v.byte_array_value->values,
                                     v.byte_array_value->values + v.byte_array_value->size);
  if (v.bool_array_value)
    return std::vector<bool>(v.bool_array_value->values,
                             v.bool_array_value->values + v.bool_array_value->size);
  if (v.integer_array_value)
    return std::vector<std::int64_t>(v.integer_array_value->values,
                                     v.integer_array_value->values + v.integer_array_value->size);
  if (v.double_array_value)
    return std::vector<double>(v.double_array_value->values,
                               v.double_array_value->values + v.double_array_value->size);
  if (v.string_array_value) {
    std::vector<std::string> out;
    for (std::size_t i = 0; i < v.string_array_value->size; ++i)
      out.emplace_back(v.string_array_value->data[i] ? v.string_array_value->data[i] : "");
    return out;
  }
  return std::monostate{};
}

// Whether a node key of a parameter file / -p rule applies to the node `fqn`: the exact name
// (a leading '/' is implied), or a wildcard where '*' is one name token and '**' any number.
bool key_matches(std::string key, const std::string& fqn) {
  if (key.empty()) return false;
  if (key[0] != '/') key = "/" + key;
  if (key == fqn) return true;
  std::string re;
  for (std::size_t i = 0; i < key.size(); ++i) {
    if (key[i] == '*' && i + 1 < key.size() && key[i + 1] == '*') {
      re += ".*";
      ++i;
    } else if (key[i] == '*') {
      re += "[^/]*";
    } else if (std::isalnum(static_cast<unsigned char>(key[i])) || key[i] == '_' || key[i] == '/') {
      re += key[i];
    } else {
      re += '\\';
      re += key[i];
    }
  }
  return std::regex_match(fqn, std::regex(re));
}

// Every override for the node `fqn` in `args` (global or node arguments). Precedence as in
// rclcpp: entries under a wildcard key first, then under the node's own name (which win); within
// each, rcl's merge order (later files and -p rules replace earlier values of the same key).
void collect_overrides(const rcl_arguments_t* args, const std::string& fqn,
                       std::vector<std::pair<std::string, ParameterValue>>& out) {
  if (!args || !args->impl) return;
  rcl_params_t* params = nullptr;
  if (rcl_arguments_get_param_overrides(args, &params) != RCL_RET_OK) {
    std::string msg = std::string("parameter overrides: ") + rcl_get_error_string().str;
    rcl_reset_error();
    throw std::runtime_error(msg);
  }
  if (!params) return;
  for (int exact = 0; exact < 2; ++exact)
    for (std::size_t n = 0; n < params->num_nodes; ++n) {
      std::string key = params->node_names[n] ? params->node_names[n] : "";
      const bool is_exact = (key.empty() || key[0] == '/' ? key : "/" + key) == fqn;
      if (is_exact != (exact == 1) || !key_matches(key, fqn)) continue;
      const rcl_node_params_t& np = params->params[n];
      for (std::size_t i = 0; i < np.num_params; ++i) {
        std::string name = np.parameter_names[i];
        ParameterValue pv = from_rcl(np.parameter_values[i]);
        if (pv.index() == 0) continue;
        auto it = std::find_if(out.begin(), out.end(), [&](auto& p) { return p.first == name; });
        if (it != out.end()) it->second = std::move(pv);
        else out.emplace_back(std::move(name), std::move(pv));
      }
    }
  rcl_yaml_node_struct_fini(params);
}

// rcl_interfaces/ParameterValue <-> ParameterValue (the variant index is the type constant).
ParameterValue from_msg(const rcl_interfaces::msg::ParameterValue& m) {
  switch (m.type) {
    case 1: return m.bool_value;
    case 2: return m.integer_value;
    case 3: return m.double_value;
    case 4: return m.string_value;
    case 5: return std::vector<std::uint8_t>(m.byte_array_value.begin(), m.byte_array_value.end());
    case 6: return std::vector<bool>(m.bool_array_value.begin(), m.bool_array_value.end());
    case 7: return std::vector<std::int64_t>(m.integer_array_value.begin(), m.integer_array_value.end());
    case 8: return std::vector<double>(m.double_array_value.begin(), m.double_array_value.end());
    case 9: return std::vector<std::string>(m.string_array_value.begin(), m.string_array_value.end());
    default: return std::monostate{};
  }
}

rcl_interfaces::msg::ParameterValue to_msg(const ParameterValue& v) {
  rcl_interfaces::msg::ParameterValue m;
  m.type = static_cast<std::uint8_t>(v.index());
  switch (v.index()) {
    case 1: m.bool_value = std::get<1>(v); break;
    case 2: m.integer_value = std::get<2>(v); break;
    case 3: m.double_value = std::get<3>(v); break;
    case 4: m.string_value = std::get<4>(v); break;
    case 5: m.byte_array_value.assign(std::get<5>(v).begin(), std::get<5>(v).end()); break;
    case 6: m.bool_array_value.assign(std::get<6>(v).begin(), std::get<6>(v).end()); break;
    case 7: m.integer_array_value.assign(std::get<7>(v).begin(), std::get<7>(v).end()); break;
    case 8: m.double_array_value.assign(std::get<8>(v).begin(), std::get<8>(v).end()); break;
    case 9: m.string_array_value.assign(std::get<9>(v).begin(), std::get<9>(v).end()); break;
    default: break;
  }
  return m;
}

}  // namespace

Parameters::Parameters(Node& node) : node_(&node) {
  const std::string fqn = node.fully_qualified_name();
  collect_overrides(&node.context().get()->global_arguments, fqn, overrides_);
  const rcl_node_options_t* o = rcl_node_get_options(node.get());
  if (o) collect_overrides(&o->arguments, fqn, overrides_);
}

Parameters::~Parameters() = default;

Parameters::Entry* Parameters::find(const std::string& name) {
  for (auto& e : entries_)
    if (e.name == name) return &e;
  return nullptr;
}
const Parameters::Entry* Parameters::find(const std::string& name) const {
  for (auto& e : entries_)
    if (e.name == name) return &e;
  return nullptr;
}

ParameterValue Parameters::declare(const std::string& name, ParameterValue value,
                                   ParameterDescriptor descriptor) {
  std::lock_guard<std::mutex> lk(mutex_);
  if (name.empty()) throw std::invalid_argument("a parameter needs a name");
  if (find(name)) throw std::invalid_argument("parameter '" + name + "' is already declared");
  for (const auto& [n, v] : overrides_) {
    if (n != name) continue;
    ParameterValue ov = v;
    // `-p gain:=2` for a double parameter: the YAML parser reads an integer
    if (value.index() == 3 && ov.index() == 2) ov = static_cast<double>(std::get<2>(ov));
    if (!descriptor.dynamic_typing && value.index() != 0 && ov.index() != value.index())
      throw std::invalid_argument("parameter '" + name + "': the override is of type " +
                                  parameter_type_name(ov) + ", the parameter of type " +
                                  parameter_type_name(value));
    value = std::move(ov);
  }
  entries_.push_back(Entry{name, value, std::move(descriptor)});
  return value;
}

bool Parameters::has(const std::string& name) const {
  std::lock_guard<std::mutex> lk(mutex_);
  return find(name) != nullptr;
}

bool Parameters::has_override(const std::string& name) const {
  std::lock_guard<std::mutex> lk(mutex_);
  for (const auto& o : overrides_)
    if (o.first == name) return true;
  return false;
}

ParameterValue Parameters::get(const std::string& name) const {
  std::lock_guard<std::mutex> lk(mutex_);
  const Entry* e = find(name);
  if (!e) throw std::out_of_range("parameter '" + name + "' is not declared");
  return e->value;
}

ParameterDescriptor Parameters::descriptor(const std::string& name) const {
  std::lock_guard<std::mutex> lk(mutex_);
  const Entry* e = find(name);
  if (!e) throw std::out_of_range("parameter '" + name + "' is not declared");
  return e->descriptor;
}

std::vector<std::string> Parameters::names() const {
  std::lock_guard<std::mutex> lk(mutex_);
  std::vector<std::string> out;
  for (const auto& e : entries_) out.push_back(e.name);
  return out;
}

void Parameters::add_validator(Validator v) {
  std::lock_guard<std::mutex> lk(mutex_);
  validators_.push_back(std::move(v));
}

void Parameters::add_on_change(OnChange f) {
  std::lock_guard<std::mutex> lk(mutex_);
  on_change_.push_back(std::move(f));
}

SetParameterResult Parameters::check(const Entry* e, const std::string& name,
                                     const ParameterValue& v) const {
  if (!e) return {false, "parameter '" + name + "' is not declared"};
  if (e->descriptor.read_only) return {false, "parameter '" + name + "' is read-only"};
  if (!e->descriptor.dynamic_typing && e->value.index() != 0 && v.index() != e->value.index())
    return {false, "parameter '" + name + "' is of type " + parameter_type_name(e->value) +
                       ", not " + parameter_type_name(v)};
  return {};
}

SetParameterResult Parameters::set(const std::string& name, const ParameterValue& value) {
  return set_atomically({{name, value}});
}

SetParameterResult Parameters::set_atomically(
    const std::vector<std::pair<std::string, ParameterValue>>& values) {
  std::vector<Validator> validators;
  {
    std::lock_guard<std::mutex> lk(mutex_);
    for (const auto& [n, v] : values) {
      SetParameterResult r = check(find(n), n, v);
      if (!r.successful) return r;
    }
    validators = validators_;
  }
  // Validators run without the lock: they may read other parameters.
  for (const auto& [n, v] : values)
    for (const auto& val : validators) {
      SetParameterResult r;
      try {
        r = val(n, v);
      } catch (const std::exception& ex) {
        r = {false, std::string("validator failed: ") + ex.what()};
      }
      if (!r.successful) return r;
    }
  std::vector<OnChange> on_change;
  {
    std::lock_guard<std::mutex> lk(mutex_);
    for (const auto& [n, v] : values) {
      Entry* e = find(n);
      SetParameterResult r = check(e, n, v);
      if (!r.successful) return r;
    }
    for (const auto& [n, v] : values) find(n)->value = v;
    on_change = on_change_;
  }
  for (const auto& [n, v] : values)
    for (const auto& f : on_change) {
      try {
        f(n, v);
      } catch (const std::exception& ex) {
        std::fprintf(stderr, "chainrt: parameter '%s' changed, but applying it failed: %s\n",
                     n.c_str(), ex.what());
      }
    }
  return {};
}

void Parameters::enable_services(CallbackOptions options) {
  namespace srv = rcl_interfaces::srv;
  if (!services_.empty()) return;
  const std::string base = node_->name() + "/";
  auto opts = [&](const char* what) {
    CallbackOptions o = options;
    o.name = node_->name() + "/parameters/" + what;
    return o;
  };
  services_.push_back(node_->create_service<srv::GetParameters>(
      base + "get_parameters",
      [this](const srv::GetParameters::Request& req, srv::GetParameters::Response& res) {
        for (const auto& n : req.names) {
          std::lock_guard<std::mutex> lk(mutex_);
          const Entry* e = find(n);
          res.values.push_back(to_msg(e ? e->value : ParameterValue{}));
        }
      },
      opts("get")));
  services_.push_back(node_->create_service<srv::GetParameterTypes>(
      base + "get_parameter_types",
      [this](const srv::GetParameterTypes::Request& req, srv::GetParameterTypes::Response& res) {
        std::lock_guard<std::mutex> lk(mutex_);
        for (const auto& n : req.names) {
          const Entry* e = find(n);
          res.types.push_back(static_cast<std::uint8_t>(e ? e->value.index() : 0));
        }
      },
      opts("get_types")));
  services_.push_back(node_->create_service<srv::SetParameters>(
      base + "set_parameters",
      [this](const srv::SetParameters::Request& req, srv::SetParameters::Response& res) {
        for (const auto& p : req.parameters) {
          SetParameterResult r = set(p.name, from_msg(p.value));
          rcl_interfaces::msg::SetParametersResult m;
          m.successful = r.successful;
          m.reason = r.reason;
          res.results.push_back(m);
        }
      },
      opts("set")));
  services_.push_back(node_->create_service<srv::SetParametersAtomically>(
      base + "set_parameters_atomically",
      [this](const srv::SetParametersAtomically::Request& req,
             srv::SetParametersAtomically::Response& res) {
        std::vector<std::pair<std::string, ParameterValue>> values;
        for (const auto& p : req.parameters) values.emplace_back(p.name, from_msg(p.value));
        SetParameterResult r = set_atomically(values);
        res.result.successful = r.successful;
        res.result.reason = r.reason;
      },
      opts("set_atomically")));
  services_.push_back(node_->create_service<srv::ListParameters>(
      base + "list_parameters",
      [this](const srv::ListParameters::Request& req, srv::ListParameters::Response& res) {
        std::lock_guard<std::mutex> lk(mutex_);
        for (const auto& e : entries_) {
          // depth: number of '.'-separated tokens below a prefix (0 = any)
          bool match = req.prefixes.empty();
          for (const auto& p : req.prefixes)
            if (e.name == p || e.name.rfind(p + ".", 0) == 0) match = true;
          if (!match) continue;
          if (req.depth > 0 &&
              static_cast<std::uint64_t>(std::count(e.name.begin(), e.name.end(), '.')) >= req.depth)
            continue;
          res.result.names.push_back(e.name);
          const auto dot = e.name.rfind('.');
          if (dot != std::string::npos) {
            std::string prefix = e.name.substr(0, dot);
            if (std::find(res.result.prefixes.begin(), res.result.prefixes.end(), prefix) ==
                res.result.prefixes.end())
              res.result.prefixes.push_back(prefix);
          }
        }
      },
      opts("list")));
  services_.push_back(node_->create_service<srv::DescribeParameters>(
      base + "describe_parameters",
      [this](const srv::DescribeParameters::Request& req, srv::DescribeParameters::Response& res) {
        std::lock_guard<std::mutex> lk(mutex_);
        for (const auto& n : req.names) {
          rcl_interfaces::msg::ParameterDescriptor d;
          d.name = n;
          if (const Entry* e = find(n)) {
            d.type = static_cast<std::uint8_t>(e->value.index());
            d.description = e->descriptor.description;
            d.read_only = e->descriptor.read_only;
            d.dynamic_typing = e->descriptor.dynamic_typing;
          }
          res.descriptors.push_back(d);
        }
      },
      opts("describe")));
}

}  // namespace chainrt::runtime
