// ROS 2 names for model entities (names.hpp).
#include "chainrt/runtime/names.hpp"

#include <cctype>

namespace chainrt::runtime {

std::string ros_name(const std::string& s) {
  std::string o;
  for (char c : s) o += (std::isalnum(static_cast<unsigned char>(c)) ? c : '_');
  if (o.empty() || std::isdigit(static_cast<unsigned char>(o[0]))) o = "n" + o;
  return o;
}

std::string ros_topic_name(const std::string& prefix, const std::string& topic) {
  std::string t;
  for (char c : topic) t += (std::isalnum(static_cast<unsigned char>(c)) || c == '/' ? c : '_');
  while (!t.empty() && t.front() == '/') t.erase(t.begin());
  std::string p = prefix;
  while (!p.empty() && p.back() == '/') p.pop_back();
  return (p.empty() ? "/" : p + "/") + t;
}

}  // namespace chainrt::runtime
