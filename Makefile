# Entry points for people and CI. Every target installs the Debian dependencies first (a no-op
# once they are present), then configures and builds with the CMake presets.
PRESET ?= release
BUILD_DIR := build/$(PRESET)
JOBS ?= $(shell nproc)

FUZZ_SECONDS ?= 300
FUZZ_TARGETS ?=

.PHONY: all deps configure build demo test bench asan fuzz fuzz-build fuzz-smoke clean

all: build

deps:
	bash scripts/install-deps.sh

configure: deps
	cmake --preset $(PRESET) >/dev/null

build: configure
	cmake --build --preset $(PRESET) -j $(JOBS)

# Only what the demo runs: the trnsim tool and the libraries under it, not the tests and
# benchmarks (make test builds everything).
demo: configure
	cmake --build --preset $(PRESET) -j $(JOBS) --target trnsim
	$(BUILD_DIR)/tools/trnsim/trnsim demo

# The whole suite: the unit tests (which replay the fuzz corpora too), then the same corpora
# under AddressSanitizer and UndefinedBehaviorSanitizer.
test: build
	ctest --preset $(PRESET) -j $(JOBS)
	$(MAKE) fuzz-smoke

bench: build
	bash scripts/run-benchmarks.sh $(BUILD_DIR)

asan:
	$(MAKE) test PRESET=asan

# libFuzzer targets (clang, ASan+UBSan); docs/fuzzing.md.
fuzz-build: deps
	cmake --preset fuzz >/dev/null
	cmake --build --preset fuzz -j $(JOBS)

fuzz: fuzz-build
	bash scripts/run-fuzzers.sh build/fuzz $(FUZZ_SECONDS) $(FUZZ_TARGETS)

# The replay needs no optimisation: an -O0 build of the targets takes about half as long.
fuzz-smoke: deps
	cmake --preset fuzz-smoke >/dev/null
	cmake --build --preset fuzz-smoke -j $(JOBS)
	bash scripts/run-fuzzers.sh --replay build/fuzz-smoke

clean:
	rm -rf build
