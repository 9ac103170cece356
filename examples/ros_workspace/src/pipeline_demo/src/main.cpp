// pipeline_main MODEL [SECONDS] [--ros-args ...]: runs the package's two nodes under the
// chainrt executor the model describes and prints the executor's report (JSON) on stdout.
#include <chainrt/model/yaml_io.hpp>
#include <chainrt/runtime/executor.hpp>
#include <chainrt/runtime/model_binding.hpp>

#include <cstdio>
#include <exception>
#include <string>

#include "pipeline_demo/nodes.hpp"

int main(int argc, char** argv) {
  namespace rt = chainrt::runtime;
  if (argc < 2) {
    std::fprintf(stderr, "usage: pipeline_main MODEL.yaml [SECONDS] [--ros-args ...]\n");
    return 1;
  }
  try {
    const double seconds = argc > 2 && argv[2][0] != '-' ? std::stod(argv[2]) : 5.0;
    rt::ModelBinding model(chainrt::load_model(argv[1]));
    rt::Context ctx(argc, argv);  // rcl takes the --ros-args part
    pipeline_demo::CameraDriver camera(ctx, model, 1'000'000);
    pipeline_demo::ObstacleFilter filter(ctx, model, 2'000'000, 4'000'000);
    model.check_bound();  // every model callback of the executor has its real one

    rt::Executor executor(ctx, model.executor_options());
    executor.add_node(camera.node());
    executor.add_node(filter.node());
    model.add_chains(executor);
    executor.measure_from(rt::now_ns() + 200'000'000);  // first instances: discovery warm-up
    rt::install_signal_handlers();
    executor.spin_for(static_cast<chainrt::Duration>(seconds * 1e9));
    std::printf("%s\n", rt::to_json(executor.report()).c_str());
    std::fprintf(stderr, "pipeline_main: %llu frames captured, %llu processed\n",
                 static_cast<unsigned long long>(camera.frames()),
                 static_cast<unsigned long long>(filter.processed()));
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "pipeline_main: %s\n", e.what());
    return 1;
  }
}
