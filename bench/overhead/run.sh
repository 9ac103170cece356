#!/usr/bin/env bash
# Run the executor overhead benchmark (EDF paper Fig. 6 workload) and plot it.
# usage: bench/overhead/run.sh [BUILD_DIR] [extra chainrt-bench-overhead args...]
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
build="${1:-$root/build}"; shift || true
bin="$build/bench/overhead/chainrt-bench-overhead"
[ -x "$bin" ] || { echo "not built: $bin (needs ROS 2; run scripts/setup)" >&2; exit 1; }
# shellcheck disable=SC1091
source "$build/chainrt_ros2_env.sh"
export ROS_DOMAIN_ID="${ROS_DOMAIN_ID:-88}" ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST
mkdir -p "$root/out"
"$bin" --json "$root/out/overhead.json" "$@" | tee "$root/out/overhead.txt"
"$root/.venv/bin/python" "$root/bench/overhead/plot.py" "$root/out/overhead.json" "$root/out/overhead.png"
echo "wrote out/overhead.{txt,json,png}"
