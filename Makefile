# Thin driver over the set-up scripts and CMake. `make train` and `make test` do all the set-up.
BUILD ?= build
JOBS ?= $(shell nproc)
CMAKE_FLAGS ?=

.PHONY: all deps data build train test fuzz sanitize simulate bundle format check-format clean help

all: build

help:
	@echo "make train   set up, build and train the default network on the default data set"
	@echo "make test    set up, build and run every test (GPU tests skip without a GPU)"
	@echo "make build   configure and build into $(BUILD)/"
	@echo "make deps    install packages and build StarPU (cached)"
	@echo "make data    fetch and verify MNIST and Fashion-MNIST into data/"
	@echo "make fuzz    build the libFuzzer targets with clang (build-fuzz/) and run each FUZZ_SECONDS"
	@echo "make sanitize  build with AddressSanitizer+UBSan (build-asan/) and run the tests once"
	@echo "make simulate  build StarPU with SimGrid and perf/simulate against it (build-sim/)"
	@echo "make bundle  pack the build into bundle/ (and bundle.tar.xz) for the GPU machine"
	@echo "make format  clang-format every C++ and CUDA source"
	@echo "make check-format  fail, naming them, on sources clang-format would change (as CI does)"

# setup-deps prints the prefixes of StarPU with FxT and of the fast StarPU on its last two lines;
# the build reads them from these files.
$(BUILD)/starpu-prefix: scripts/setup-deps scripts/starpu-1.3.10.patch
	@mkdir -p $(BUILD)
	scripts/setup-deps > $(BUILD)/starpu-prefix.tmp
	@tail -n2 $(BUILD)/starpu-prefix.tmp | head -n1 > $(BUILD)/starpu-fxt-prefix
	@tail -n1 $(BUILD)/starpu-prefix.tmp > $@ && rm -f $(BUILD)/starpu-prefix.tmp

deps: $(BUILD)/starpu-prefix

data:
	scripts/fetch-data

build: $(BUILD)/starpu-prefix
	cmake -S . -B $(BUILD) -DSTARCNN_STARPU_PREFIX=$$(cat $(BUILD)/starpu-prefix) \
	  -DSTARCNN_STARPU_FXT_PREFIX=$$(cat $(BUILD)/starpu-fxt-prefix) $(CMAKE_FLAGS)
	cmake --build $(BUILD) -j$(JOBS)

# The main job: lenet on MNIST, checkpoint in build/. TRAIN_ARGS adds or overrides train's flags.
TRAIN_ARGS ?=
train: build data
	$(BUILD)/apps/train --data mnist --network lenet --epochs 3 --lr-schedule cosine \
	  --checkpoint $(BUILD)/lenet-mnist.safetensors $(TRAIN_ARGS)

test: build data
	cd $(BUILD) && ctest --output-on-failure --timeout 600

# Fuzzing and sanitizers: each its own build directory, CPU-only (CUDA and sanitizers do not mix).
FUZZ_BUILD ?= build-fuzz
FUZZ_SECONDS ?= 10
fuzz: deps
	cmake -S . -B $(FUZZ_BUILD) -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ \
	  -DCMAKE_BUILD_TYPE=RelWithDebInfo -DSTARCNN_WITH_CUDA=OFF -DSTARCNN_FUZZ=ON \
	  -DSTARCNN_STARPU_PREFIX=$$(cat $(BUILD)/starpu-prefix) $(FUZZ_CMAKE_FLAGS)
	cmake --build $(FUZZ_BUILD) -j$(JOBS) --target fuzz_targets
	tests/fuzz/run-fuzzers $(FUZZ_BUILD) $(FUZZ_SECONDS)

# StarPU's own allocations are not instrumented and live until exit: leaks are not reported.
SANITIZE_BUILD ?= build-asan
sanitize: deps data
	$(MAKE) build BUILD=$(SANITIZE_BUILD) CMAKE_FLAGS="-DSTARCNN_WITH_CUDA=OFF \
	  -DCMAKE_BUILD_TYPE=RelWithDebInfo \
	  -DCMAKE_CXX_FLAGS='-fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer' \
	  $(SANITIZE_CMAKE_FLAGS)"
	cd $(SANITIZE_BUILD) && ASAN_OPTIONS=detect_leaks=0 UBSAN_OPTIONS=print_stacktrace=1 \
	  ctest --output-on-failure --timeout 1200 -j$(JOBS)

# StarPU's SimGrid mode predicts machines we do not have (perf/simulate.cpp): a third StarPU build
# (setup-deps --simgrid prints its prefix last), CPU codelets only (simulated CUDA workers take
# stand-ins: no task runs), no MPI.
SIM_BUILD ?= build-sim
$(SIM_BUILD)/starpu-prefix: scripts/setup-deps scripts/starpu-1.3.10.patch
	@mkdir -p $(SIM_BUILD)
	scripts/setup-deps --simgrid > $(SIM_BUILD)/starpu-prefix.tmp
	@tail -n1 $(SIM_BUILD)/starpu-prefix.tmp > $@ && rm -f $(SIM_BUILD)/starpu-prefix.tmp

simulate: $(SIM_BUILD)/starpu-prefix
	cmake -S . -B $(SIM_BUILD) -DSTARCNN_STARPU_PREFIX=$$(cat $(SIM_BUILD)/starpu-prefix) \
	  -DSTARCNN_WITH_CUDA=OFF -DSTARCNN_WITH_MPI=OFF $(CMAKE_FLAGS)
	cmake --build $(SIM_BUILD) -j$(JOBS) --target simulate

bundle: build
	scripts/make-bundle $(BUILD) bundle

format:
	clang-format -i $$(git ls-files '*.cpp' '*.h' '*.cu')

check-format:
	scripts/check-format

clean:
	rm -rf $(BUILD) bundle bundle.tar.xz
