#!/usr/bin/env bash
# Runs the libFuzzer targets built by the `fuzz` preset (docs/fuzzing.md).
#   run-fuzzers.sh BUILD_DIR SECONDS [TARGET...]  fuzz each target for SECONDS, one after another,
#                                                 from its seed and regression corpora; new inputs
#                                                 go to out/fuzz/<target>/, crashes beside them
#   run-fuzzers.sh --replay BUILD_DIR             run every corpus input once under ASan+UBSan
# Exits non-zero when any target crashes, hangs, leaks or trips a sanitizer.
set -euo pipefail
cd "$(dirname "$0")/.."

replay=0
if [ "${1:-}" = "--replay" ]; then
  replay=1
  shift
fi
build_dir=${1:?usage: run-fuzzers.sh [--replay] BUILD_DIR [SECONDS [TARGET...]]}
shift
seconds=0
if [ "$replay" -eq 0 ]; then
  seconds=${1:?usage: run-fuzzers.sh BUILD_DIR SECONDS [TARGET...]}
  shift
fi

targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
  for corpus in fuzz/corpus/*/; do
    targets+=("$(basename "$corpus")")
  done
fi

# Leaks are findings too; UBSan reports abort (the build uses -fno-sanitize-recover=all).
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"

status=0
for target in "${targets[@]}"; do
  binary="$build_dir/fuzz/fuzz_$target"
  corpora=()
  for dir in "fuzz/corpus/$target/seed" "fuzz/corpus/$target/regression"; do
    [ -d "$dir" ] && corpora+=("$dir")
  done
  if [ ! -x "$binary" ]; then
    echo "run-fuzzers: $binary is not built (cmake --build --preset fuzz)" >&2
    exit 1
  fi
  if [ "$replay" -eq 1 ]; then
    start=$(date +%s)
    # Files as arguments: libFuzzer runs each once and writes nothing.
    mapfile -t inputs < <(find "${corpora[@]}" -type f | sort)
    if "$binary" -timeout=60 -rss_limit_mb=8192 "${inputs[@]}" >"$build_dir/replay_$target.log" 2>&1; then
      echo "fuzz smoke: $target: ${#inputs[@]} inputs clean under ASan+UBSan ($(( $(date +%s) - start )) s)"
    else
      echo "fuzz smoke: $target: FAILED (log: $build_dir/replay_$target.log)" >&2
      tail -40 "$build_dir/replay_$target.log" >&2
      status=1
    fi
    continue
  fi
  work="out/fuzz/$target"
  mkdir -p "$work"
  echo "fuzzing $target for $seconds s (corpus $work)"
  if ! "$binary" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=4096 -print_final_stats=1 \
      -artifact_prefix="$work/" "$work" "${corpora[@]}" >"$work/fuzz.log" 2>&1; then
    echo "fuzzing $target: a finding; see $work/fuzz.log and $work/crash-* / timeout-* / oom-*" >&2
    tail -40 "$work/fuzz.log" >&2
    status=1
  fi
  grep -E "stat::number_of_executed_units|stat::new_units_added" "$work/fuzz.log" | sed "s/^/  $target: /" || true
done
exit $status
