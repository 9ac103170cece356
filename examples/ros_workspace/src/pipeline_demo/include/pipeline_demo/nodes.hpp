// pipeline_demo: the package's own nodes. They are plain chainrt::runtime::Node objects whose
// callbacks take their scheduling options (name, priority, affinity) from the chain model.
#pragma once

#include <chainrt/runtime/model_binding.hpp>
#include <chainrt/runtime/node.hpp>
#include <std_msgs/msg/header.hpp>

#include <atomic>
#include <cstdint>
#include <memory>

namespace pipeline_demo {

// Publishes a frame header every period ("capture"); the header stamp carries the release of
// the chain instance so that the filter's deadline is the chain's.
class CameraDriver {
 public:
  CameraDriver(chainrt::runtime::Context& ctx, const chainrt::runtime::ModelBinding& model,
               chainrt::Duration work);
  chainrt::runtime::Node& node() { return node_; }
  std::uint64_t frames() const { return frames_.load(); }

 private:
  chainrt::runtime::Node node_;
  std::shared_ptr<chainrt::runtime::Publisher<std_msgs::msg::Header>> pub_;
  std::shared_ptr<chainrt::runtime::Timer> timer_;
  std_msgs::msg::Header msg_;  // preallocated: no allocation per frame
  chainrt::Duration work_;
  std::atomic<std::uint64_t> frames_{0};
};

// Processes every frame ("detect") and runs a low-priority housekeeping timer.
class ObstacleFilter {
 public:
  ObstacleFilter(chainrt::runtime::Context& ctx, const chainrt::runtime::ModelBinding& model,
                 chainrt::Duration work, chainrt::Duration housekeeping_work);
  chainrt::runtime::Node& node() { return node_; }
  std::uint64_t processed() const { return processed_.load(); }

 private:
  chainrt::runtime::Node node_;
  std::shared_ptr<chainrt::runtime::Subscription<std_msgs::msg::Header>> sub_;
  std::shared_ptr<chainrt::runtime::Timer> housekeeping_;
  chainrt::Duration work_, housekeeping_work_;
  std::atomic<std::uint64_t> processed_{0};
};

}  // namespace pipeline_demo
