#!/usr/bin/env bash
# Runs every benchmark program of a release build and keeps their JSON results in out/bench/.
# Usage: scripts/run-benchmarks.sh [build-dir]   (default build/release)
set -euo pipefail
build_dir=${1:-build/release}
out_dir=out/bench
mkdir -p "$out_dir"
shopt -s nullglob
benches=("$build_dir"/bench/*_bench)
if [ ${#benches[@]} -eq 0 ]; then
  echo "run-benchmarks: no benchmark programs in $build_dir/bench (build the release preset first)" >&2
  exit 1
fi
for bench in "${benches[@]}"; do
  name=$(basename "$bench")
  echo "== $name"
  "$bench" --benchmark_out="$out_dir/$name.json" --benchmark_out_format=json
done
