// ROS 2 names for model entities: the model allows any characters in node and topic names,
// ROS 2 allows letters, digits and underscores (and '/' between topic tokens). Shared by the
// model runner (chainrt-run) and the reference-system workload.
#pragma once

#include <string>

namespace chainrt::runtime {

// Letters, digits and underscores; never starts with a digit ("3d" -> "n3d").
std::string ros_name(const std::string& name);
// "<prefix>/<topic>" with every character outside [A-Za-z0-9_/] replaced by '_'.
std::string ros_topic_name(const std::string& prefix, const std::string& topic);

}  // namespace chainrt::runtime
