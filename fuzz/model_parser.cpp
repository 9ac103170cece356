// Coverage-guided fuzz target (libFuzzer, with AddressSanitizer and UndefinedBehaviorSanitizer)
// for the model parser, the trust boundary of every chainrt command: any byte string must end
// in a model or in a ModelError with located diagnostics — no crash, no other exception, no
// hang, bounded memory. A model that loads must also survive the writer and load again to the
// same model (the format round-trips). Built and run by fuzz/run (docs/cli.md, "Fuzzing").
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "chainrt/model/yaml_io.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string text(reinterpret_cast<const char*>(data), size);
  chainrt::Model model;
  try {
    model = chainrt::load_model_from_string(text, "fuzz.yaml");
  } catch (const chainrt::ModelError& e) {
    for (const auto& d : e.diagnostics())
      if (d.message.empty()) {
        std::fprintf(stderr, "a diagnostic without a message: %s\n", d.str().c_str());
        std::abort();
      }
    return 0;
  }
  // Loaded: the writer's output must load again, to the same model.
  std::string again = chainrt::save_model_to_string(model);
  try {
    chainrt::Model back = chainrt::load_model_from_string(again, "round-trip.yaml");
    if (!(back == model)) {
      std::fprintf(stderr, "the model changed in a round trip:\n%s\n", again.c_str());
      std::abort();
    }
  } catch (const chainrt::ModelError& e) {
    std::fprintf(stderr, "the writer's output does not load:\n%s\n%s\n", again.c_str(), e.what());
    std::abort();
  }
  return 0;
}
