// rcl smoke test: proves that the ROS 2 build plumbing (cmake/ChainrtROS2.cmake) gives a
// working rcl + Fast DDS: two rcl nodes in one process exchange a std_msgs/String through the
// real middleware (a DDS publisher and reader, discovery included; no mock, no chainrt code).
// Robust on a loaded machine: the publisher repeats until the reader has matched, and the
// only time limit is a generous give-up bound (no wall-clock number is asserted).
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <string>

#include <rcl/rcl.h>
#include <rcl/error_handling.h>
#include <std_msgs/msg/string.hpp>

namespace {

#define ASSERT_RCL(expr)                                                         \
  do {                                                                           \
    rcl_ret_t rc_ = (expr);                                                      \
    ASSERT_EQ(rc_, RCL_RET_OK) << #expr << ": " << rcl_get_error_string().str;   \
    rcl_reset_error();                                                           \
  } while (0)

TEST(RclSmoke, TwoNodesExchangeAStringThroughFastDds) {
  rcl_allocator_t alloc = rcl_get_default_allocator();
  rcl_init_options_t opts = rcl_get_zero_initialized_init_options();
  ASSERT_RCL(rcl_init_options_init(&opts, alloc));
  rcl_context_t context = rcl_get_zero_initialized_context();
  ASSERT_RCL(rcl_init(0, nullptr, &opts, &context));

  rcl_node_t talker = rcl_get_zero_initialized_node();
  rcl_node_t listener = rcl_get_zero_initialized_node();
  rcl_node_options_t node_opts = rcl_node_get_default_options();
  ASSERT_RCL(rcl_node_init(&talker, "chainrt_smoke_talker", "", &context, &node_opts));
  ASSERT_RCL(rcl_node_init(&listener, "chainrt_smoke_listener", "", &context, &node_opts));

  // A topic of this process only: concurrent runs in the same domain cannot interfere.
  const std::string topic = "chainrt_smoke_" + std::to_string(getpid());
  const rosidl_message_type_support_t* ts =
      rosidl_typesupport_cpp::get_message_type_support_handle<std_msgs::msg::String>();

  rcl_publisher_t pub = rcl_get_zero_initialized_publisher();
  rcl_publisher_options_t pub_opts = rcl_publisher_get_default_options();
  pub_opts.qos.depth = 10;
  ASSERT_RCL(rcl_publisher_init(&pub, &talker, ts, topic.c_str(), &pub_opts));
  rcl_subscription_t sub = rcl_get_zero_initialized_subscription();
  rcl_subscription_options_t sub_opts = rcl_subscription_get_default_options();
  sub_opts.qos.depth = 10;
  ASSERT_RCL(rcl_subscription_init(&sub, &listener, ts, topic.c_str(), &sub_opts));

  rcl_wait_set_t ws = rcl_get_zero_initialized_wait_set();
  ASSERT_RCL(rcl_wait_set_init(&ws, 1, 0, 0, 0, 0, 0, &context, alloc));

  std_msgs::msg::String out;
  out.data = "hello from chainrt";
  std_msgs::msg::String in;
  bool received = false;
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(90);
  while (!received && std::chrono::steady_clock::now() < give_up) {
    ASSERT_RCL(rcl_publish(&pub, &out, nullptr));
    ASSERT_RCL(rcl_wait_set_clear(&ws));
    ASSERT_RCL(rcl_wait_set_add_subscription(&ws, &sub, nullptr));
    rcl_ret_t rc = rcl_wait(&ws, RCL_MS_TO_NS(200));
    rcl_reset_error();
    if (rc == RCL_RET_TIMEOUT) continue;
    ASSERT_EQ(rc, RCL_RET_OK);
    if (ws.subscriptions[0] == nullptr) continue;
    rmw_message_info_t info = rmw_get_zero_initialized_message_info();
    rc = rcl_take(&sub, &in, &info, nullptr);
    rcl_reset_error();
    if (rc == RCL_RET_OK) received = true;
  }
  EXPECT_TRUE(received) << "no message arrived through Fast DDS";
  EXPECT_EQ(in.data, out.data);

  EXPECT_EQ(rcl_wait_set_fini(&ws), RCL_RET_OK);
  EXPECT_EQ(rcl_subscription_fini(&sub, &listener), RCL_RET_OK);
  EXPECT_EQ(rcl_publisher_fini(&pub, &talker), RCL_RET_OK);
  EXPECT_EQ(rcl_node_fini(&listener), RCL_RET_OK);
  EXPECT_EQ(rcl_node_fini(&talker), RCL_RET_OK);
  EXPECT_EQ(rcl_shutdown(&context), RCL_RET_OK);
  EXPECT_EQ(rcl_context_fini(&context), RCL_RET_OK);
  EXPECT_EQ(rcl_init_options_fini(&opts), RCL_RET_OK);
}

}  // namespace
