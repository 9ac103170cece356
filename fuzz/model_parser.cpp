// Coverage-guided fuzz target (libFuzzer, with AddressSanitizer and UndefinedBehaviorSanitizer)
// for the model parser, the trust boundary of every chainrt command. It calls the loader as a
// C++ user does — chainrt::load_model(path) on a file, catching chainrt::ModelError — and
// requires for every byte string either a model or a ModelError whose every diagnostic has a
// message and a place (line:column in the file): any other exception, a diagnostic without a
// place, a crash, a hang or unbounded memory is a finding. A model that loads must also survive
// the writer and load again to the same model (the format round-trips), and load_model_from_string
// must agree with load_model. Built and run by fuzz/run (docs/cli.md, "Fuzzing").
#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <typeinfo>
#include <string>

#include "chainrt/model/yaml_io.hpp"

namespace {

[[noreturn]] void finding(const char* what, const std::string& detail) {
  std::fprintf(stderr, "FINDING: %s\n%s\n", what, detail.c_str());
  std::abort();
}

// The input as a file (an in-memory one: no disk traffic per execution), so that the loader
// runs from its file entry point as a user's program calls it.
const std::string& input_path() {
  static const std::string path = [] {
    int fd = memfd_create("model.yaml", 0);
    if (fd < 0) finding("memfd_create failed", "");
    return "/proc/self/fd/" + std::to_string(fd);
  }();
  return path;
}

void write_input(const std::uint8_t* data, std::size_t size) {
  static const int fd = std::stoi(input_path().substr(std::string("/proc/self/fd/").size()));
  if (ftruncate(fd, 0) != 0) finding("ftruncate failed", "");
  std::size_t done = 0;
  while (done < size) {
    ssize_t n = pwrite(fd, data + done, size - done, static_cast<off_t>(done));
    if (n <= 0) finding("pwrite failed", "");
    done += static_cast<std::size_t>(n);
  }
}

// Every rejection is a ModelError whose every diagnostic has a message and a place.
void require_located(const chainrt::ModelError& e) {
  if (e.diagnostics().empty()) finding("a ModelError without diagnostics", e.what());
  for (const auto& d : e.diagnostics()) {
    if (d.message.empty()) finding("a diagnostic without a message", d.str());
    if (d.line <= 0 || d.column <= 0) finding("a diagnostic without a line:column", d.str());
  }
}

// Loads with `load`; returns true with `out` set, or false after checking the ModelError.
template <class F>
bool load_checked(F&& load, chainrt::Model& out, const char* entry) {
  try {
    out = load();
    return true;
  } catch (const chainrt::ModelError& e) {
    require_located(e);
    return false;
  } catch (const std::exception& e) {
    finding((std::string(entry) + " threw an exception other than chainrt::ModelError").c_str(),
            std::string(typeid(e).name()) + ": " + e.what());
  } catch (...) {
    finding((std::string(entry) + " threw a non-standard exception").c_str(), "");
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  write_input(data, size);
  chainrt::Model model;
  const bool loaded = load_checked([&] { return chainrt::load_model(input_path()); }, model, "load_model");
  std::string text(reinterpret_cast<const char*>(data), size);
  chainrt::Model same;
  if (load_checked([&] { return chainrt::load_model_from_string(text, "fuzz.yaml"); }, same,
                   "load_model_from_string") != loaded)
    finding("load_model and load_model_from_string disagree", text);
  if (!loaded) return 0;
  // Loaded: the writer's output must load again, to the same model.
  std::string again;
  try {
    again = chainrt::save_model_to_string(model);
  } catch (const std::exception& e) {
    finding("the writer threw", e.what());
  }
  chainrt::Model back;
  try {
    back = chainrt::load_model_from_string(again, "round-trip.yaml");
  } catch (const std::exception& e) {
    finding("the writer's output does not load", again + "\n" + e.what());
  }
  if (!(back == model)) finding("the model changed in a round trip", again);
  return 0;
}
