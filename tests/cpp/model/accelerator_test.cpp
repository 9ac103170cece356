// Shared accelerators in the model (PiCAS Sec. IV): the YAML fields, their validation with
// located errors, the round trip, and the pieces a callback with server-mode segments runs as
// (model/accelerator.hpp).
#include <gtest/gtest.h>

#include "chainrt/model/accelerator.hpp"
#include "chainrt/model/yaml_io.hpp"

using namespace chainrt;

namespace {

constexpr Duration us = 1'000, ms = 1'000'000;

const char* kModel = R"(name: gpu
hosts:
  - name: h
    cores: 2
    accelerators:
      - {name: gpu, access: server, priority: 90, cores: [1], overhead: 50us}
      - {name: dla, access: direct}
executors:
  - {name: e, host: h, policy: fp, threads: [{name: t0, cores: [0], priority: 10}]}
nodes: [{name: n, executor: e}]
callbacks:
  - name: detect
    kind: timer
    node: n
    period: 20ms
    wcet: 3ms
    bcet: 1500us
    priority: 5
    publishes: [objects]
    accelerator_segments:
      - {accelerator: dla, after: 500us, kernel: 1ms}
      - {accelerator: gpu, after: 1ms, copy_in: 200us, kernel: 4ms, kernel_bcet: 2ms, copy_out: 300us}
      - {accelerator: dla, after: 2ms, kernel: 1ms}
  - {name: track, kind: subscription, node: n, topic: objects, wcet: 1ms, priority: 6}
chains:
  - {name: perception, callbacks: [detect, track], priority: 3}
)";

std::string error_of(const std::string& yaml) {
  try {
    load_model_from_string(yaml, "m.yaml");
  } catch (const ModelError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST(Accelerator, ParsedWithEveryField) {
  const Model m = load_model_from_string(kModel, "m.yaml");
  ASSERT_EQ(m.hosts[0].accelerators.size(), 2u);
  const Accelerator& gpu = m.hosts[0].accelerators[0];
  EXPECT_EQ(gpu.access, AcceleratorAccess::Server);
  EXPECT_EQ(gpu.server_priority, 90);
  EXPECT_EQ(gpu.server_cores, std::vector<int>{1});
  EXPECT_EQ(gpu.server_overhead, 50 * us);
  EXPECT_EQ(m.hosts[0].accelerators[1].access, AcceleratorAccess::Direct);
  const auto& segs = m.callback("detect").accelerator_segments;
  ASSERT_EQ(segs.size(), 3u);
  EXPECT_EQ(segs[1].accelerator, "gpu");
  EXPECT_EQ(segs[1].after, 1 * ms);
  EXPECT_EQ(segs[1].wcet(), 4500 * us);
  EXPECT_EQ(segs[1].bcet(), 2500 * us);  // copy best cases default to their worst
  EXPECT_TRUE(uses_accelerators(m));
}

TEST(Accelerator, RoundTripKeepsEverything) {
  const Model m = load_model_from_string(kModel, "m.yaml");
  const Model back = load_model_from_string(save_model_to_string(m), "back.yaml");
  EXPECT_EQ(back, m);
}

TEST(Accelerator, ServerSegmentsSplitTheCallbackIntoPieces) {
  const Model m = load_model_from_string(kModel, "m.yaml");
  const AcceleratedModel am = expand_accelerators(m);
  const Model& x = am.model;
  ASSERT_EQ(x.callbacks.size(), 3u);  // detect, detect#1, track
  EXPECT_EQ(am.first, (std::vector<std::size_t>{0, 2}));
  EXPECT_EQ(am.last, (std::vector<std::size_t>{1, 2}));
  const Callback& p0 = x.callbacks[0];
  const Callback& p1 = x.callbacks[1];
  EXPECT_EQ(p0.name, "detect");
  EXPECT_EQ(p0.kind, CallbackKind::Timer);
  EXPECT_EQ(p0.wcet, 1 * ms);      // CPU before the gpu request
  EXPECT_EQ(p0.bcet, 1 * ms);      // min(1 ms, 1.5 ms) - 0
  EXPECT_EQ(p0.publishes, std::vector<std::string>{"detect#1"});
  EXPECT_EQ(p1.name, "detect#1");
  EXPECT_EQ(p1.kind, CallbackKind::Subscription);
  EXPECT_EQ(p1.topic, "detect#1");
  EXPECT_EQ(p1.wcet, 2 * ms);      // 3 ms - 1 ms
  EXPECT_EQ(p1.bcet, 500 * us);    // min(3, 1.5) - min(1, 1.5)
  EXPECT_EQ(p1.priority, 5);
  EXPECT_EQ(p1.group, p0.group);
  EXPECT_EQ(p1.publishes, std::vector<std::string>{"objects"});
  // Direct calls stay inside their piece, at the CPU time since the piece's start.
  ASSERT_EQ(am.pieces[0].direct.size(), 1u);
  EXPECT_EQ(am.pieces[0].direct[0].at, 500 * us);
  ASSERT_TRUE(am.pieces[0].request.has_value());
  EXPECT_EQ(am.pieces[0].request->segment, 1u);
  ASSERT_EQ(am.pieces[1].direct.size(), 1u);
  EXPECT_EQ(am.pieces[1].direct[0].at, 1 * ms);  // 2 ms - 1 ms
  EXPECT_FALSE(am.pieces[1].request.has_value());
  EXPECT_EQ(am.pieces[1].origin, 0u);
  EXPECT_EQ(am.pieces[1].index, 1);
  // The chain goes through the pieces.
  const Chain& c = x.chain("perception");
  EXPECT_EQ(c.callbacks, (std::vector<std::string>{"detect", "detect#1", "track"}));
  ASSERT_EQ(c.hops.size(), 2u);
  EXPECT_EQ(c.hops[0].topic, "detect#1");
  EXPECT_EQ(c.hops[1].from, "detect#1");
  EXPECT_EQ(c.hops[1].topic, "objects");
  EXPECT_TRUE(c.is_linear());
}

TEST(Accelerator, ModelWithoutSegmentsExpandsToItself) {
  const Model m = load_model_from_string(R"(
callbacks:
  - {name: a, kind: timer, node: n, period: 10ms, wcet: 1ms}
chains:
  - {name: c, callbacks: [a]}
)");
  EXPECT_FALSE(uses_accelerators(m));
  const AcceleratedModel am = expand_accelerators(m);
  EXPECT_EQ(am.model, m);
  EXPECT_EQ(am.pieces.size(), 1u);
}

TEST(Accelerator, ErrorsAreLocated) {
  const std::string head = R"(hosts:
  - name: h
    accelerators:
      - {name: gpu, access: server, priority: 90}
      - {name: dla, access: direct}
callbacks:
)";
  const std::string tail = "chains:\n  - {name: c, callbacks: [a]}\n";
  // an accelerator that the host does not have
  EXPECT_NE(error_of(head + "  - {name: a, kind: timer, node: n, period: 10ms, wcet: 1ms, accelerator_segments: [{accelerator: tpu, kernel: 1ms}]}\n" + tail)
                .find("m.yaml:7:"),
            std::string::npos);
  EXPECT_NE(error_of(head + "  - {name: a, kind: timer, node: n, period: 10ms, wcet: 1ms, accelerator_segments: [{accelerator: tpu, kernel: 1ms}]}\n" + tail)
                .find("no accelerator 'tpu' on host 'h'"),
            std::string::npos);
  // `after` beyond the WCET; segments out of order; a missing kernel
  EXPECT_NE(error_of(head + "  - {name: a, kind: timer, node: n, period: 10ms, wcet: 1ms, accelerator_segments: [{accelerator: gpu, after: 2ms, kernel: 1ms}]}\n" + tail)
                .find("exceeds the callback's wcet"),
            std::string::npos);
  EXPECT_NE(error_of(head + "  - {name: a, kind: timer, node: n, period: 10ms, wcet: 1ms, accelerator_segments: [{accelerator: gpu, after: 500us, kernel: 1ms}, {accelerator: dla, after: 100us, kernel: 1ms}]}\n" + tail)
                .find("order of 'after'"),
            std::string::npos);
  EXPECT_NE(error_of(head + "  - {name: a, kind: timer, node: n, period: 10ms, wcet: 1ms, accelerator_segments: [{accelerator: gpu}]}\n" + tail)
                .find("missing required field 'kernel'"),
            std::string::npos);
  EXPECT_NE(error_of(head + "  - {name: a, kind: timer, node: n, period: 10ms, wcet: 1ms, accelerator_segments: [{accelerator: gpu, kernel: 1ms, kernel_bcet: 2ms}]}\n" + tail)
                .find("kernel_bcet 2ms exceeds its worst case 1ms"),
            std::string::npos);
  // a server without a priority; a server thread on a direct accelerator; an unknown access
  const std::string cb = "  - {name: a, kind: timer, node: n, period: 10ms, wcet: 1ms}\n" + tail;
  EXPECT_NE(error_of("hosts: [{name: h, accelerators: [{name: gpu, access: server}]}]\ncallbacks:\n" + cb)
                .find("m.yaml:1:34: hosts[0].accelerators[0]: accelerator 'gpu' has access: server and needs"),
            std::string::npos);
  EXPECT_NE(error_of("hosts: [{name: h, accelerators: [{name: gpu, access: direct, priority: 5}]}]\ncallbacks:\n" + cb)
                .find("only a server-mode accelerator has a server thread"),
            std::string::npos);
  EXPECT_NE(error_of("hosts: [{name: h, accelerators: [{name: gpu, access: shared}]}]\ncallbacks:\n" + cb)
                .find("unknown accelerator access 'shared' (direct or server)"),
            std::string::npos);
  EXPECT_NE(error_of("hosts: [{name: h, cores: 2, accelerators: [{name: gpu, access: server, priority: 9, cores: [3]}]}]\ncallbacks:\n" + cb)
                .find("core 3 does not exist on host 'h'"),
            std::string::npos);
  EXPECT_NE(error_of("hosts: [{name: h, accelerators: [{name: g, access: direct}, {name: g, access: direct}]}]\ncallbacks:\n" + cb)
                .find("duplicate accelerator name 'g'"),
            std::string::npos);
  // only timers and subscriptions; a name that clashes with a continuation
  EXPECT_NE(error_of(head + "  - {name: a, kind: timer, node: n, period: 10ms, wcet: 1ms, publishes: [t]}\n"
                            "  - {name: s, kind: service, node: n, topic: t, wcet: 1ms, accelerator_segments: [{accelerator: gpu, kernel: 1ms}]}\n" + tail)
                .find("only timers and subscriptions may use an accelerator"),
            std::string::npos);
  EXPECT_NE(error_of(head + "  - {name: a, kind: timer, node: n, period: 10ms, wcet: 1ms, accelerator_segments: [{accelerator: gpu, kernel: 1ms}]}\n"
                            "  - {name: 'a#1', kind: timer, node: n, period: 10ms, wcet: 1ms}\n" + tail)
                .find("has the name of the continuation of 'a'"),
            std::string::npos);
}

// `preemption: block` and a segment's `block` (model.hpp Accelerator::block_preemption).
TEST(Accelerator, BlockPreemptionIsParsedCheckedAndKept) {
  const std::string host = R"(hosts:
  - name: h
    accelerators:
      - {name: gpu, access: server, priority: 90, preemption: block}
      - {name: dla, access: server, priority: 80}
callbacks:
)";
  const std::string tail = "chains:\n  - {name: c, callbacks: [a]}\n";
  auto with = [&](const std::string& seg) {
    return host + "  - {name: a, kind: timer, node: n, period: 10ms, wcet: 1ms, accelerator_segments: [" + seg +
           "]}\n" + tail;
  };
  const Model m = load_model_from_string(with("{accelerator: gpu, copy_in: 2ms, kernel: 8ms, block: 500us}"), "m.yaml");
  EXPECT_TRUE(m.hosts[0].accelerators[0].block_preemption);
  EXPECT_FALSE(m.hosts[0].accelerators[1].block_preemption);
  const AcceleratorSegment& s = m.callback("a").accelerator_segments[0];
  EXPECT_EQ(s.block, 500 * us);
  EXPECT_EQ(s.longest_chunk(), 2 * ms);  // the copy-in is longer than a block
  EXPECT_EQ(load_model_from_string(save_model_to_string(m), "back.yaml"), m);
  EXPECT_NE(error_of(with("{accelerator: gpu, kernel: 1ms, block: 2ms}")).find("block must be positive and at most the kernel"),
            std::string::npos);
  EXPECT_NE(error_of(with("{accelerator: dla, kernel: 1ms, block: 100us}")).find("needs an accelerator with preemption: block"),
            std::string::npos);
  const std::string cb = "  - {name: a, kind: timer, node: n, period: 10ms, wcet: 1ms}\n" + tail;
  EXPECT_NE(error_of("hosts: [{name: h, accelerators: [{name: gpu, access: direct, preemption: block}]}]\ncallbacks:\n" + cb)
                .find("only a server-mode accelerator is preempted by priority"),
            std::string::npos);
  EXPECT_NE(error_of("hosts: [{name: h, accelerators: [{name: gpu, access: server, priority: 9, preemption: sm}]}]\ncallbacks:\n" + cb)
                .find("unknown preemption 'sm' (request or block)"),
            std::string::npos);
}

// `device: cuda`, its GPU index and the stream-priority mapping (model.hpp Accelerator::device,
// model/accelerator.hpp cuda_stream_level / cuda_stream_thresholds).
TEST(Accelerator, CudaDeviceAndStreamPrioritiesAreParsedCheckedAndKept) {
  const std::string host = R"(hosts:
  - name: h
    accelerators:
      - {name: gpu, access: server, priority: 90, preemption: block, device: cuda, cuda_device: 1, stream_priorities: [3000, 2000]}
      - {name: dla, access: server, priority: 80, device: cuda}
      - {name: fpga, access: direct}
executors:
  - {name: e, host: h, policy: picas, threads: [{name: t, cores: [0], priority: 10}]}
nodes: [{name: n, executor: e}]
callbacks:
  - {name: a, kind: timer, node: n, period: 10ms, wcet: 1ms, accelerator_segments: [{accelerator: dla, kernel: 1ms}]}
  - {name: b, kind: timer, node: n, period: 10ms, wcet: 1ms, accelerator_segments: [{accelerator: dla, kernel: 1ms}]}
  - {name: c, kind: timer, node: n, period: 10ms, wcet: 1ms, priority: 7, accelerator_segments: [{accelerator: dla, kernel: 1ms}]}
chains:
  - {name: high, callbacks: [a], priority: 3}
  - {name: low, callbacks: [b], priority: 1}
)";
  const Model m = load_model_from_string(host, "m.yaml");
  const Accelerator& gpu = m.hosts[0].accelerators[0];
  EXPECT_EQ(gpu.device, AcceleratorDevice::Cuda);
  EXPECT_EQ(gpu.cuda_device, 1);
  EXPECT_EQ(gpu.stream_priorities, (std::vector<int>{3000, 2000}));
  EXPECT_EQ(m.hosts[0].accelerators[2].device, AcceleratorDevice::Emulated);
  EXPECT_EQ(load_model_from_string(save_model_to_string(m), "back.yaml"), m);
  // the stated thresholds; the default: each distinct effective priority of the users, descending
  EXPECT_EQ(cuda_stream_thresholds(m, {0, 0}), (std::vector<int>{3000, 2000}));
  EXPECT_EQ(cuda_stream_thresholds(m, {0, 1}), (std::vector<int>{3 * 1024, 1 * 1024, 7}));
  // the level: 0 the greatest stream priority; below every threshold or none: the least
  EXPECT_EQ(cuda_stream_level({3000, 2000}, 3072, 6), 0);
  EXPECT_EQ(cuda_stream_level({3000, 2000}, 2000, 6), 1);
  EXPECT_EQ(cuda_stream_level({3000, 2000}, 1999, 6), 5);
  EXPECT_EQ(cuda_stream_level({3000, 2000}, std::nullopt, 6), 5);
  EXPECT_EQ(cuda_stream_level({3000, 2000, 1000}, 1500, 2), 1);  // more thresholds than levels
  // errors, located
  const std::string tail =
      "callbacks:\n  - {name: a, kind: timer, node: n, period: 10ms, wcet: 1ms}\nchains:\n  - {name: c, callbacks: [a]}\n";
  EXPECT_NE(error_of("hosts: [{name: h, accelerators: [{name: gpu, access: direct, device: opencl}]}]\n" + tail)
                .find("unknown accelerator device 'opencl' (emulated or cuda)"),
            std::string::npos);
  EXPECT_NE(error_of("hosts: [{name: h, accelerators: [{name: gpu, access: direct, stream_priorities: [2]}]}]\n" + tail)
                .find("only a 'device: cuda' accelerator has a CUDA device and stream priorities"),
            std::string::npos);
  const std::string down = error_of(
      "hosts: [{name: h, accelerators: [{name: gpu, access: direct, device: cuda, stream_priorities: [2, 5]}]}]\n" + tail);
  EXPECT_NE(down.find("m.yaml:1:"), std::string::npos) << down;
  EXPECT_NE(down.find("stream_priorities must be strictly descending"), std::string::npos) << down;
  EXPECT_NE(error_of("hosts: [{name: h, accelerators: [{name: gpu, access: direct, device: cuda, stream_priorities: [x]}]}]\n" + tail)
                .find("expected a chain priority"),
            std::string::npos);
}
