// chainrt runtime: the C++ API differences between the ROS 2 lines chainrt builds on, Kilted
// (rcl 10, rclcpp 29) and Jazzy (rcl 9, rclcpp 28), in one place (docs/ros_lines.md). The build
// side of the lines is cmake/ChainrtROS2.cmake, which also defines CHAINRT_ROS_DISTRO_KILTED or
// CHAINRT_ROS_DISTRO_JAZZY and CHAINRT_ROS_DISTRO_NAME for every target linking chainrt::ros2.
// Code tests the feature macros below, never a distribution name. No paper section.
//
// The rcl API chainrt's runtime uses is the same on both lines (rcl's timer rule differs from
// Humble's and Iron's, not between these two: sched/include/chainrt/sched/timer.hpp).
#pragma once

#include <rcl/version.h>  // RCL_VERSION_MAJOR: 9 Jazzy, 10 Kilted

#if __has_include(<rclcpp/version.h>)
#include <rclcpp/version.h>  // RCLCPP_VERSION_MAJOR: 28 Jazzy, 29 Kilted

// rclcpp 29: Executor::handle_updated_entities(bool notify) is virtual; the base class's
// add_node / remove_node / add_callback_group / remove_callback_group call it, so a derived
// executor learns there of every change. rclcpp 28 has a non-virtual
// trigger_entity_recollect(bool) instead: a derived executor overrides those four and calls its
// own handler after the base class.
#if RCLCPP_VERSION_MAJOR >= 29
#define CHAINRT_RCLCPP_VIRTUAL_HANDLE_UPDATED_ENTITIES 1
#else
#define CHAINRT_RCLCPP_VIRTUAL_HANDLE_UPDATED_ENTITIES 0
#endif

// rclcpp 29: Waitable::get_timers() lists a waitable's rcl timers (an action server's goal
// expiry), which an event-driven executor must wait for itself. rclcpp 28 has no such call: its
// action server watches that timer on a thread of its own and reports the expiry through the
// waitable's on-ready callback, so the executor needs no timers of a waitable there.
#if RCLCPP_VERSION_MAJOR >= 29
#define CHAINRT_RCLCPP_WAITABLE_GET_TIMERS 1
#else
#define CHAINRT_RCLCPP_WAITABLE_GET_TIMERS 0
#endif

// rclcpp 28: every node's TimeSource subscribes to /parameter_events (in the node's default
// callback group, created by the node's constructor before any user entity) to watch
// use_sim_time; the node's own parameter declarations publish events at start, so that
// subscription is ready soon after the node is added. rclcpp 29's TimeSource watches the
// parameter through a callback and has no subscription. An executor must still serve it (it is
// rclcpp's), but it is not a user's callback: chainrt never lists it as unmatched.
#if RCLCPP_VERSION_MAJOR >= 29
#define CHAINRT_RCLCPP_TIME_SOURCE_SUBSCRIBES_PARAMETER_EVENTS 0
#else
#define CHAINRT_RCLCPP_TIME_SOURCE_SUBSCRIBES_PARAMETER_EVENTS 1
#endif

#endif  // rclcpp
