// chainrt-gpu-bench: the GPU benchmark (gpu_bench.hpp). Writes gpu_bench.md and gpu_bench.json
// to --out (default: the current folder) and the markdown table to stdout.
//   chainrt-gpu-bench --device cuda --runs 3 --samples 150 --out DIR [--realtime]
//   chainrt-gpu-bench --device emulated --scale 0.05 --samples 5 --out DIR   (the dry run)
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <stdexcept>
#include <string>

#include "gpu_bench.hpp"

namespace {

using chainrt::bench_gpu::Options;

const char* const kUsage =
    "usage: chainrt-gpu-bench [--device cuda|emulated] [--runs N] [--samples N] [--scale X] [--rows a,b]\n"
    "                         [--realtime] [--out DIR]";

long long number(const std::string& flag, const std::string& v, long long lo, long long hi) {
  char* end = nullptr;
  const long long x = std::strtoll(v.c_str(), &end, 10);
  if (v.empty() || *end != '\0' || x < lo || x > hi)
    throw std::invalid_argument(flag + " expects a whole number in " + std::to_string(lo) + ".." + std::to_string(hi) +
                                ", not '" + v + "'");
  return x;
}

Options parse(int argc, char** argv, std::string* out) {
  Options o;
  char self[4096] = {};
  const ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
  o.self = n > 0 ? std::string(self, static_cast<std::size_t>(n)) : argv[0];
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) throw std::invalid_argument(a + " needs a value");
      return argv[++i];
    };
    if (a == "--device") {
      o.device = value();
      if (o.device != "cuda" && o.device != "emulated")
        throw std::invalid_argument("--device is cuda or emulated, not '" + o.device + "'");
    } else if (a == "--runs") o.runs = static_cast<int>(number(a, value(), 1, 100));
    else if (a == "--samples") o.samples = static_cast<int>(number(a, value(), 1, 100000));
    else if (a == "--scale") {
      const std::string v = value();
      char* end = nullptr;
      o.scale = std::strtod(v.c_str(), &end);
      if (v.empty() || *end != '\0' || !(o.scale > 0 && o.scale <= 100))
        throw std::invalid_argument("--scale expects a number in (0, 100], not '" + v + "'");
    } else if (a == "--rows") {
      std::string v = value(), cur;
      for (char c : v + ",") {
        if (c != ',') cur += c;
        else if (!cur.empty()) o.rows.push_back(cur), cur.clear();
      }
    } else if (a == "--realtime") o.realtime = true;
    else if (a == "--out") *out = value();
    else throw std::invalid_argument("unknown argument '" + a + "'\n" + kUsage);
  }
  return o;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc == 5 && std::string(argv[1]) == "--low-worker")
    return chainrt::bench_gpu::low_worker(std::atoi(argv[2]), std::atoll(argv[3]), std::atoll(argv[4]));
  if (argc == 6 && std::string(argv[1]) == "--low-client")
    return chainrt::bench_gpu::low_client(argv[2], std::atoi(argv[3]), std::atoll(argv[4]), std::atoll(argv[5]));
  try {
    std::string out = ".";
    const Options o = parse(argc, argv, &out);
    const auto r = chainrt::bench_gpu::run(o);
    const std::string md = chainrt::bench_gpu::markdown(r);
    std::ofstream f_md(out + "/gpu_bench.md"), f_json(out + "/gpu_bench.json");
    if (!(f_md << md) || !(f_json << chainrt::bench_gpu::json(r)))
      throw std::runtime_error("cannot write the tables to " + out);
    std::fputs(md.c_str(), stdout);
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "chainrt-gpu-bench: %s\n", e.what());
    return 2;
  }
}
