#!/usr/bin/env bash
# Installs everything trnsim needs to build, test, fuzz and benchmark on Debian 12, from Debian
# packages only. Idempotent: when every package is already present it does nothing. clang-16
# builds the fuzz targets (libFuzzer, ASan+UBSan): clang 14 cannot compile std::source_location
# with Debian's libstdc++ 12.
# libonnx-dev and libprotobuf-dev parse ONNX models (src/graph); python3-onnx writes the test
# models (scripts/make_test_models.py); python3-torch exports PyTorch models for trnsim.trace and
# its tests (tests/python/test_trace.py) and regenerates tests/graph/models; python3-torchvision
# gives tests/python/test_cnn.py torchvision's ResNet-18 definition.
# chromium opens the HTML report in the browser test (tests/profile/html_report_browser_test.sh).
set -euo pipefail

packages=(
  build-essential cmake ninja-build pkg-config
  libgtest-dev libgmock-dev libbenchmark-dev
  libyaml-dev libfmt-dev libcli11-dev libhwy-dev
  libopenblas-dev nlohmann-json3-dev
  libonnx-dev libprotobuf-dev python3-onnx
  clang-16 libclang-rt-16-dev
  python3 python3-dev pybind11-dev python3-numpy python3-pytest python3-torch python3-torchvision
  chromium
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done

if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi

sudo_cmd=()
if [ "$(id -u)" -ne 0 ]; then
  sudo_cmd=(sudo)
fi
echo "install-deps: installing ${missing[*]}"
"${sudo_cmd[@]}" apt-get update -qq
DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
