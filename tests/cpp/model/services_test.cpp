// Services and clients as chain hops (docs/model.md, "services"): the hops a chain through a
// service gets, the derived request/response topics every analysis and the simulator read,
// and a writer that leaves the derived data out.
#include <gtest/gtest.h>

#include <algorithm>

#include "chainrt/model/facts.hpp"
#include "chainrt/model/yaml_io.hpp"

using namespace chainrt;

namespace {

const char* kRobot = R"(chainrt: 1
services:
  - {name: map/query, request_size: 100B, response_size: 2KiB}
callbacks:
  - {name: camera, kind: timer, node: cam, period: 33333us, period_tolerance: 8us, wcet: 1ms, publishes: [image]}
  - {name: plan, kind: subscription, node: planner, topic: image, wcet: 4ms, calls: [map/query]}
  - {name: serve, kind: service, node: map, service: map/query, wcet: 1ms}
  - {name: on_map, kind: client, node: planner, service: map/query, wcet: 300us, publishes: [cmd]}
chains:
  - {name: control, callbacks: [camera, plan, serve, on_map]}
)";

const Topic* derived_topic(const Model& m, const std::string& prefix) {
  for (const auto& t : m.topics)
    if (!t.service.empty() && t.name.rfind(prefix, 0) == 0) return &t;
  return nullptr;
}

}  // namespace

TEST(Services, ChainHopsAreRequestAndResponseWithTheirSizes) {
  Model m = load_model_from_string(kRobot, "robot.yaml");
  const Chain& c = m.chain("control");
  ASSERT_EQ(c.hops.size(), 3u);
  EXPECT_EQ(c.hops[0].kind, HopKind::Topic);
  EXPECT_EQ(c.hops[1].kind, HopKind::Request);
  EXPECT_EQ(c.hops[1].topic, "map/query");
  EXPECT_EQ(c.hops[1].message_size, 100);
  EXPECT_EQ(c.hops[2].kind, HopKind::Response);
  EXPECT_EQ(c.hops[2].message_size, 2048);
  EXPECT_EQ(m.callback("camera").period_tolerance, 8'000);
  EXPECT_EQ(*m.server_of("map/query"), m.callback_index("serve"));
  EXPECT_EQ(*m.client_of("planner", "map/query"), m.callback_index("on_map"));
}

TEST(Services, LoweredIntoMessagesTheAnalysesRead) {
  Model m = load_model_from_string(kRobot, "robot.yaml");
  const Topic* req = derived_topic(m, "map/query#request");
  const Topic* resp = derived_topic(m, "map/query#response@planner");
  ASSERT_NE(req, nullptr);
  ASSERT_NE(resp, nullptr);
  EXPECT_EQ(req->size, 100);
  EXPECT_EQ(resp->size, 2048);
  // the caller publishes the request, the server takes it and publishes the response, which
  // releases the caller node's client callback; kinds stay (the default executor's order)
  const Callback& plan = m.callback("plan");
  EXPECT_NE(std::find(plan.publishes.begin(), plan.publishes.end(), req->name), plan.publishes.end());
  EXPECT_EQ(m.callback("serve").topic, req->name);
  EXPECT_EQ(m.callback("serve").kind, CallbackKind::Service);
  EXPECT_EQ(m.callback("on_map").topic, resp->name);
  ASSERT_EQ(m.subscribers(req->name).size(), 1u);
  EXPECT_EQ(m.subscribers(resp->name), std::vector<std::size_t>{m.callback_index("on_map")});
  // a request is not an output that fuses inputs
  EXPECT_TRUE(implicit_fusion_sets(m).empty());
}

TEST(Services, WriterLeavesTheDerivedDataOutAndRoundTrips) {
  Model m = load_model_from_string(kRobot, "robot.yaml");
  const std::string text = save_model_to_string(m);
  EXPECT_EQ(text.find('#'), std::string::npos) << text;   // no derived topic name
  EXPECT_NE(text.find("calls: [map/query]"), std::string::npos) << text;
  EXPECT_NE(text.find("service: map/query"), std::string::npos) << text;
  EXPECT_NE(text.find("period_tolerance: 8us"), std::string::npos) << text;
  Model again = load_model_from_string(text, "again.yaml");
  EXPECT_EQ(again, m);
  // validating a validated model again gives the same model (the lowering is redone, not doubled)
  Model twice = m;
  validate(twice, "twice");
  EXPECT_EQ(twice, m);
}

TEST(Services, CallersInTwoNodesEachGetTheirResponseTopic) {
  Model m = load_model_from_string(R"(chainrt: 1
callbacks:
  - {name: a, kind: timer, node: n1, period: 10ms, wcet: 1ms, calls: [q]}
  - {name: b, kind: timer, node: n2, period: 20ms, wcet: 1ms, calls: [q]}
  - {name: s, kind: service, node: srv, service: q, wcet: 1ms}
  - {name: ra, kind: client, node: n1, service: q, wcet: 1ms}
  - {name: rb, kind: client, node: n2, service: q, wcet: 1ms}
chains:
  - {name: ca, callbacks: [a, s, ra]}
  - {name: cb, callbacks: [b, s, rb]}
)", "two.yaml");
  // one request topic, one response topic per caller node; the server publishes both (the
  // documented over-approximation)
  EXPECT_EQ(m.callback("s").publishes.size(), 2u);
  EXPECT_NE(m.callback("ra").topic, m.callback("rb").topic);
  EXPECT_EQ(m.subscribers(m.callback("ra").topic), std::vector<std::size_t>{m.callback_index("ra")});
}

TEST(Services, ErrorsAreLocated) {
  try {
    load_model_from_string(R"(chainrt: 1
callbacks:
  - {name: a, kind: timer, node: n, period: 10ms, wcet: 1ms}
  - {name: s, kind: service, node: m, service: q, wcet: 1ms}
chains:
  - {name: c, callbacks: [a, s]}
)", "x.yaml");
    FAIL() << "a hop into a server from a callback that does not call it was accepted";
  } catch (const ModelError& e) {
    ASSERT_FALSE(e.diagnostics().empty());
    EXPECT_EQ(e.diagnostics()[0].line, 6);
    EXPECT_GT(e.diagnostics()[0].column, 0);
    EXPECT_NE(e.diagnostics()[0].message.find("does not call it"), std::string::npos);
  }
}
