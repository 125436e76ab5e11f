#!/usr/bin/env bash
# Opens trnsim's HTML reports in headless Chromium and checks that they render: the page sets
# data-status="rendered" on <body> once the timeline is drawn (or "error", with data-errors,
# on any script error), and data-slices / data-drawn to the timeline's slice count, which must
# equal what trnsim printed when it wrote the report. Exit 77 (ctest: skipped) without chromium.
#
#   html_report_browser_test.sh TRNSIM SOURCE_DIR WORK_DIR
set -euo pipefail

trnsim=$1
source_dir=$2
work=$3

browser=$(command -v chromium || command -v chromium-browser || true)
if [ -z "$browser" ]; then
  echo "SKIPPED: chromium is not installed (scripts/install-deps.sh installs it)"
  exit 77
fi

rm -rf "$work"
mkdir -p "$work"
failures=0

# check NAME EXPECTED_SLICES TRNSIM_ARGS...: writes the report, opens it, compares.
check() {
  local name=$1 expected=$2
  shift 2
  local report="$work/$name.html"
  local printed
  printed=$("$trnsim" "$@" --report "$report" |
            sed -n 's/^report: .* KiB, \([0-9]*\) timeline slices.*/\1/p')
  if [ -z "$printed" ]; then
    echo "FAIL $name: trnsim printed no report line"
    failures=$((failures + 1))
    return
  fi
  if [ "$expected" != "-" ] && [ "$printed" != "$expected" ]; then
    echo "FAIL $name: trnsim wrote $printed slices, expected $expected"
    failures=$((failures + 1))
  fi
  local dom
  # No name resolves: the page must need nothing from the network.
  dom=$(timeout 120 "$browser" --headless --disable-gpu --no-sandbox --no-first-run \
          --host-resolver-rules="MAP * ~NOTFOUND" \
          --user-data-dir="$work/profile" --virtual-time-budget=30000 \
          --run-all-compositor-stages-before-draw --dump-dom "file://$report" 2>/dev/null)
  local body
  body=$(printf '%s' "$dom" | grep -o '<body[^>]*>' | head -1)
  echo "$name: $body"
  case "$body" in
    *'data-status="rendered"'*) ;;
    *) echo "FAIL $name: the page did not render without errors"; failures=$((failures + 1)) ;;
  esac
  case "$body" in
    *"data-slices=\"$printed\""*"data-drawn=\"$printed\""*) ;;
    *) echo "FAIL $name: the timeline does not hold the $printed slices trnsim wrote"
       failures=$((failures + 1)) ;;
  esac
}

# 5 instructions and 3 transfers.
check matmul_gelu 8 run "$source_dir/examples/matmul_gelu.tasm" --mode timing-only
# Two cores of one launch, on their own lanes.
check rmsnorm_lnc2 - kernels bench rmsnorm --mode timing-only --lnc 2 --no-check
# A timeline larger than the page shows in full: merged slices.
check demo_small - demo --small --mode timing-only --no-check --trace ''
# Collectives. A ring all-reduce on the 4 x 4 torus runs two rings (one each way) of 16 chips:
# 2 x 30 steps x 16 messages, each on its sender's HBM, one link and its receiver's HBM, and
# 2 x 15 x 16 reductions on one HBM each: 2,880 + 480 slices. Then a functional run, and 4,096
# chips (the timeline aggregated).
check collective_ring 3360 collectives bench --sizes 1M --algorithm ring
check collective_run - collectives run --size 64K --ranks 8
check collective_4096 - collectives bench --system trn2-ultraserver-cluster --sizes 64M \
  --algorithm torus

# The check itself: a script error after the page has drawn must show as data-status="error".
broken="$work/broken.html"
{
  cat "$work/matmul_gelu.html"
  echo '<script>setTimeout(function () { undefinedFunction(); }, 10);</script>'
} >"$broken"
body=$(timeout 120 "$browser" --headless --disable-gpu --no-sandbox --no-first-run \
         --host-resolver-rules="MAP * ~NOTFOUND" --user-data-dir="$work/profile" \
         --virtual-time-budget=10000 --dump-dom "file://$broken" 2>/dev/null |
       grep -o '<body[^>]*>' | head -1)
case "$body" in
  *'data-status="error"'*'undefinedFunction'*) echo "broken page: reported as broken" ;;
  *) echo "FAIL: a page with a script error was not reported: $body"; failures=$((failures + 1)) ;;
esac

if [ "$failures" -ne 0 ]; then
  echo "$failures check(s) failed"
  exit 1
fi
echo "all reports rendered"
