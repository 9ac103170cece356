// ModelBinding's rule for the C++ runtime (docs/model.md, "Binding real callbacks to the
// model"): callbacks bind by name with options(); check_bound() refuses a model callback of the
// executor that no options() call asked for, naming it.
#include <gtest/gtest.h>

#include "chainrt/model/yaml_io.hpp"
#include "chainrt/runtime/model_binding.hpp"

using namespace chainrt;

TEST(ModelBinding, AnUnboundModelCallbackIsAnErrorNamingIt) {
  runtime::ModelBinding b(load_model_from_string(R"(chainrt: 1
services: [{name: q}]
callbacks:
  - {name: ask, kind: timer, node: a, period: 10ms, wcet: 1ms, calls: [q]}
  - {name: serve, kind: service, node: s, service: q, wcet: 1ms}
  - {name: answer, kind: client, node: a, service: q, wcet: 1ms}
chains:
  - {name: c, callbacks: [ask, serve, answer]}
)"));
  b.options("ask");
  b.options("serve");
  EXPECT_EQ(b.unbound(), std::vector<std::string>{"answer"});
  try {
    b.check_bound();
    FAIL() << "an unbound model callback was accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("answer"), std::string::npos) << e.what();
  }
  b.options("answer");
  EXPECT_NO_THROW(b.check_bound());
  EXPECT_THROW(b.options("nope"), std::invalid_argument);
}
