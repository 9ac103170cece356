#!/usr/bin/env bash
# bench/gpu/device_check.sh: the GPU check, one call on a machine with an NVIDIA GPU, CUDA's
# nvcc, CMake and ninja (no ROS 2, no Python packages): from the repository root,
#
#   OUT=/some/folder bench/gpu/device_check.sh            # the GPU: about 3 minutes
#   OUT=/some/folder bench/gpu/device_check.sh --dry-run  # the emulated device, no GPU needed
#
# configures and builds only what it needs (CHAINRT_ACCELERATOR_ONLY: the accelerator runtime,
# its CUDA backend, bench/gpu and the CUDA tests), runs the CUDA backend's tests (ctest -L cuda)
# and the benchmark (3 runs), and writes to $OUT: gpu_bench.md and gpu_bench.json (the tables),
# ctest_cuda.log, bench.log, build.log (its tail), machine.txt and summary.txt.
# --dry-run runs the same steps on the emulated device at a small scale (what CI tests); with
# CHAINRT_GPU_BUILD_DIR naming a build that has chainrt-gpu-bench, it builds nothing.
set -uo pipefail

dry=0
case "${1:-}" in
  --dry-run) dry=1 ;;
  "") ;;
  *) echo "usage: OUT=DIR bench/gpu/device_check.sh [--dry-run]" >&2; exit 2 ;;
esac
root=$(cd "$(dirname "$0")/../.." && pwd)
out=${OUT:-$root/build-gpu/out}
mkdir -p "$out" || { echo "device_check: cannot create $out" >&2; exit 2; }
build=${CHAINRT_GPU_BUILD_DIR:-$root/build-gpu}
start=$(date +%s)
summary="$out/summary.txt"
: > "$summary"
note() { echo "device_check: $*" | tee -a "$summary"; }
finish() {
  note "elapsed $(( $(date +%s) - start )) s; status $1"
  exit "$1"
}

{
  echo "date: $(date -u '+%Y-%m-%d %H:%M UTC')"
  echo "host: $(uname -srm); cores: $(nproc)"
  command -v nvidia-smi >/dev/null && nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv
  command -v nvcc >/dev/null && nvcc --version | tail -2
  cmake --version | head -1
} > "$out/machine.txt" 2>&1

bench="$build/bench/gpu/chainrt-gpu-bench"
if [[ $dry -eq 1 && -n "${CHAINRT_GPU_BUILD_DIR:-}" && -x "$bench" ]]; then
  note "dry run with the build in $build"
else
  gen=()
  command -v ninja >/dev/null && gen=(-G Ninja)
  cuda=(-DCHAINRT_WITH_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES="${CUDA_ARCHITECTURES:-90}")
  # nvcc off the PATH: the toolkit's usual place
  if ! command -v nvcc >/dev/null && [[ -x /usr/local/cuda/bin/nvcc ]]; then
    cuda+=(-DCMAKE_CUDA_COMPILER=/usr/local/cuda/bin/nvcc)
  fi
  [[ $dry -eq 1 ]] && cuda=(-DCHAINRT_WITH_CUDA=AUTO)
  note "configure and build in $build"
  mkdir -p "$build"
  log="$build/device_check_build.log"
  if ! { cmake -S "$root" -B "$build" "${gen[@]}" -DCHAINRT_ACCELERATOR_ONLY=ON -DCMAKE_BUILD_TYPE=Release \
           "${cuda[@]}" &&
         cmake --build "$build" -j "$(nproc)" --target chainrt-gpu-bench $([[ $dry -eq 0 ]] && echo test_cuda_backend); \
       } > "$log" 2>&1; then
    tail -n 200 "$log" > "$out/build.log"
    note "the build failed (build.log)"
    finish 1
  fi
  tail -n 50 "$log" > "$out/build.log"
fi

status=0
ctest --test-dir "$build" -L cuda -V --timeout 120 > "$out/ctest_cuda.log" 2>&1 || status=1
note "ctest -L cuda: $(grep -E 'tests passed|tests failed' "$out/ctest_cuda.log" | tail -1)"
# each check's line (the test's own output, which -V prefixes with the test's number)
sed -nE 's/^([0-9]+: )?((ok|FAILED|skipped):.*)/  \2/p' "$out/ctest_cuda.log" | tee -a "$summary"
if [[ $dry -eq 0 ]] && grep -q '(Skipped)' "$out/ctest_cuda.log"; then
  note "the CUDA tests were skipped on the machine meant to run them"
  status=1
fi

if [[ $dry -eq 1 ]]; then
  args=(--device emulated --runs 3 --samples 5 --scale 0.05)
else
  args=(--device cuda --runs 3 --samples 150 --realtime)
fi
if "$bench" "${args[@]}" --out "$out" > "$out/bench.log" 2>&1; then
  note "benchmark: $bench ${args[*]} (gpu_bench.md, gpu_bench.json)"
else
  note "the benchmark failed (bench.log): $(tail -1 "$out/bench.log")"
  status=1
fi
finish "$status"
