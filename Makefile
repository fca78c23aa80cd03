# The two set-up commands (README): `make run` and `make test`.
BUILD      ?= build
BUILD_ASAN ?= build-asan
BUILD_TSAN ?= build-tsan
JOBS       ?= $(shell nproc)
CMAKE_ARGS ?=

.PHONY: all deps build run test test-fast asan tsan wheel conformance-doc clean

all: build

deps:
	@./scripts/fetch-deps.sh

$(BUILD)/CMakeCache.txt: | deps
	cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=RelWithDebInfo $(CMAKE_ARGS)

build: deps $(BUILD)/CMakeCache.txt
	cmake --build $(BUILD) -j $(JOBS)

# The main job: the EP on its embedded default model, checked against the CPU EP.
run: build
	./$(BUILD)/bin/hipdnn-ep-run

# Every test: the normal build, then the sanitizer build of the same suite,
# then the threaded tests under ThreadSanitizer.
test: build
	ctest --test-dir $(BUILD) --output-on-failure -j $(JOBS)
	$(MAKE) asan
	$(MAKE) tsan

test-fast: build
	ctest --test-dir $(BUILD) --output-on-failure -j $(JOBS)

# The Python package onnxruntime-ep-hipdnn (python/): build/dist/*.whl.
wheel: build
	cmake --build $(BUILD) --target wheel

asan: deps
	cmake -S . -B $(BUILD_ASAN) -DCMAKE_BUILD_TYPE=Debug -DHIPDNN_EP_SANITIZE=ON $(CMAKE_ARGS)
	cmake --build $(BUILD_ASAN) -j $(JOBS)
	ctest --test-dir $(BUILD_ASAN) --output-on-failure -j $(JOBS) -LE no-asan

# The tests that run one session from many threads (label "threads"), built
# with ThreadSanitizer: only what they need.
TSAN_TARGETS = hipdnn_ep hipdnn-ep-run test_stress test_profile test_genai_contract hh_llm_models
tsan: deps
	cmake -S . -B $(BUILD_TSAN) -DCMAKE_BUILD_TYPE=Debug -DHIPDNN_EP_TSAN=ON $(CMAKE_ARGS)
	cmake --build $(BUILD_TSAN) -j $(JOBS) --target $(TSAN_TARGETS)
	ctest --test-dir $(BUILD_TSAN) --output-on-failure -j $(JOBS) -L threads

clean:
	rm -rf $(BUILD) $(BUILD_ASAN) $(BUILD_TSAN)

# docs/conformance.md: the ref backend (ORT 1.29) run here, plus the GPU
# column from docs/conformance-gpu.json when present (made on the GPU machine
# with `hipdnn-ep-conformance --cases ... --backend auto --json ...`).
CONFORMANCE_CASES ?= ../shared/onnx-node-tests/node
CONFORMANCE_GPU_JSON ?= docs/conformance-gpu.json
conformance-doc: build
	./$(BUILD)/bin/hipdnn-ep-conformance --cases $(CONFORMANCE_CASES) --backend ref \
	  --jobs $(JOBS) --no-table --json $(BUILD)/conformance-ref.json; [ $$? -le 1 ]
	./$(BUILD)/bin/hipdnn-ep-conformance --merge-markdown docs/conformance.md \
	  $(BUILD)/conformance-ref.json $(wildcard $(CONFORMANCE_GPU_JSON))
