# Entry points for people and CI. Every target installs the Debian dependencies first (a no-op
# once they are present), then configures and builds with the CMake presets.
PRESET ?= release
BUILD_DIR := build/$(PRESET)
JOBS ?= $(shell nproc)

.PHONY: all deps configure build demo test bench asan clean

all: build

deps:
	bash scripts/install-deps.sh

configure: deps
	cmake --preset $(PRESET) >/dev/null

build: configure
	cmake --build --preset $(PRESET) -j $(JOBS)

demo: build
	$(BUILD_DIR)/tools/trnsim/trnsim demo

test: build
	ctest --preset $(PRESET) -j $(JOBS)

bench: build
	bash scripts/run-benchmarks.sh $(BUILD_DIR)

asan:
	$(MAKE) test PRESET=asan

clean:
	rm -rf build
