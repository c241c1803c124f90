# Doppler: the two commands of the README, plus bench, format and fuzz.
#   make demo   install missing packages, build (Release), run the main job on the default workload
#   make test   install missing packages, build, run the whole test suite (ctest)
# Both are idempotent and fast when nothing changed.

BUILD     ?= build
JOBS      ?= $(shell nproc 2>/dev/null || echo 2)
CMAKE_ARGS ?=

.PHONY: all deps configure build demo test bench format format-check clean

all: build

deps:
	@scripts/install-deps.sh

$(BUILD)/build.ninja: | deps
	cmake -S . -B $(BUILD) -G Ninja -DCMAKE_BUILD_TYPE=Release $(CMAKE_ARGS)

configure: $(BUILD)/build.ninja

build: deps configure
	@cmake --build $(BUILD) -j $(JOBS)

demo: build
	@$(BUILD)/doppler demo

test: build
	@ctest --test-dir $(BUILD) --output-on-failure -j $(JOBS) --timeout 1200

bench: build
	@scripts/run-bench.sh $(BUILD)

format:
	@git ls-files '*.cpp' '*.hpp' | xargs clang-format -i

format-check:
	@git ls-files '*.cpp' '*.hpp' | xargs clang-format --dry-run --Werror

clean:
	rm -rf $(BUILD)
