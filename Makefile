# kvx: the two commands of the README, and a few more.
#
#   make run    set up, build, and run the main job: plan, compile and inspect the
#               contention spec, then measure it on the GPU (results/kvx.db) and
#               tabulate; without a GPU, everything but measuring, said plainly
#   make test   set up, build, and run the test suite (ctest: the labels unit,
#               e2e, gpu and slurm; gpu and slurm tests skip with a reason
#               where no GPU or no Slurm is present)
#
# Also: make build, make test-unit (only the unit label: in process, seconds),
# make test-asan (ASan+UBSan, labels unit and e2e), make fuzz (libFuzzer, 60 s
# per target), make gpu-test (only the gpu label), make clean.

BUILD ?= build
SPEC ?= specs/contention.yaml
JOBS ?= $(shell nproc 2>/dev/null || echo 2)
CMAKE_FLAGS ?=
ifeq ($(CI),true)
CMAKE_FLAGS += -DKVX_WERROR=ON
endif

.PHONY: all deps build run test test-unit test-asan gpu-test fuzz clean

all: build

deps:
	@scripts/deps.sh

build: deps
	@cmake -S . -B $(BUILD) $(CMAKE_FLAGS) >/dev/null
	@cmake --build $(BUILD) -j $(JOBS)

# The main job needs the kvx binary alone: the test binaries are make test's.
run:
	@scripts/deps.sh --main
	@cmake -S . -B $(BUILD) $(CMAKE_FLAGS) >/dev/null
	@cmake --build $(BUILD) -j $(JOBS) --target kvx
	@scripts/main-job.sh $(BUILD)/kvx $(SPEC)

test: build
	@cd $(BUILD) && ctest --output-on-failure -j $(JOBS)

test-unit: build
	@cd $(BUILD) && ctest --output-on-failure -j $(JOBS) -L unit

gpu-test: build
	@cd $(BUILD) && ctest --output-on-failure -L gpu

test-asan: deps
	@cmake -S . -B $(BUILD)-asan -DKVX_SANITIZE=ON $(CMAKE_FLAGS) >/dev/null
	@cmake --build $(BUILD)-asan -j $(JOBS)
	@cd $(BUILD)-asan && ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 ctest --output-on-failure -j $(JOBS) -L cpu

fuzz: deps
	@cmake -S . -B $(BUILD)-fuzz -DKVX_FUZZ=ON -DCMAKE_C_COMPILER=clang $(CMAKE_FLAGS) >/dev/null
	@cmake --build $(BUILD)-fuzz -j $(JOBS) --target fuzz_expr fuzz_spec fuzz_import
	@for t in expr spec import; do mkdir -p $(BUILD)-fuzz/corpus-$$t && cp tests/fuzz/corpus/$$t/* $(BUILD)-fuzz/corpus-$$t/ && \
	  $(BUILD)-fuzz/tests/fuzz_$$t -max_total_time=$${FUZZ_SECONDS:-60} -timeout=10 $(BUILD)-fuzz/corpus-$$t || exit 1; done

clean:
	rm -rf $(BUILD) $(BUILD)-asan $(BUILD)-fuzz
