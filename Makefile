# mpisgd build. `make` builds, `make test` runs every test, `make demo` trains on a small
# generated set, `make bench` runs the benchmarks. Each first installs what is missing.
# Options: SANITIZE=1 (address+undefined), DEBUG=1 (-O0 -g), GPU=1 (the CUDA path, build-gpu),
# GPU=omp (the same device code on the CPU through Thrust's OpenMP backend, build-gpu-omp),
# MPI=mpich (Debian's MPICH instead of the default Open MPI, built into build-mpich;
# `make test MPI=mpich` runs the suite under it), SIM=1 (SimGrid's SMPI: every rank in one
# process on a simulated network, built into build-sim; run with scripts/simulate.sh).

MPI       ?= openmpi
ifeq ($(MPI),mpich)
CXX       := mpicxx.mpich
MPIRUN    := mpirun.mpich
DEPS_FLAGS := --mpich
else ifeq ($(MPI),openmpi)
CXX       := mpicxx
MPIRUN    := mpirun
else
$(error MPI=$(MPI): use MPI=openmpi (the default) or MPI=mpich)
endif
# SMPI's compiler wrapper links each program as a shared object that smpirun loads once per
# simulated rank. Its MPI-IO simulates only the time of reads (it moves no bytes), so the
# files are read with POSIX calls there (data/posix_file_io.cpp).
ifdef SIM
CXX       := smpicxx
DEPS_FLAGS := --sim
CXXFLAGS  += -include src/comm/smpi_compat.h -DMPISGD_SIM
FILE_IO   := src/data/posix_file_io.cpp
else
FILE_IO   := src/data/mpi_file_io.cpp
endif
# Each MPI and sanitizer build has a folder of its own, so none mixes objects of another.
BUILD     ?= build$(if $(SIM),-sim,$(if $(filter mpich,$(MPI)),-mpich))$(if $(SANITIZE),-san)
# GPU=1 compiles the GPU path (src/device/*.cu) with nvcc; GPU=omp compiles the same files
# with $(CXX) against Thrust's OpenMP backend, which runs and tests them without a GPU.
# Both take Thrust from the CUDA toolkit under CUDA_HOME (no Debian package has it, so
# install_deps.sh leaves it out) and link the CPU build's objects (OBJ_HOME): only the
# device files differ. Open MPI and MPICH builds alike; not with SIM or SANITIZE.
CUDA_HOME ?= /usr/local/cuda
OBJ_HOME  := $(BUILD)
ifneq ($(GPU),)
ifneq ($(SIM)$(SANITIZE),)
$(error GPU=$(GPU) builds neither with SIM nor with SANITIZE)
endif
endif
ifeq ($(GPU),1)
NVCC      := $(or $(shell command -v nvcc 2>/dev/null),$(wildcard $(CUDA_HOME)/bin/nvcc))
ifeq ($(NVCC),)
$(error GPU=1: no nvcc on PATH or at $(CUDA_HOME)/bin/nvcc; install the CUDA toolkit or set CUDA_HOME)
endif
BUILD     := $(BUILD)-gpu
# sm_90 code for H100 and H200, and its PTX, which later GPUs compile when loading.
GPU_ARCH  ?= -gencode arch=compute_90,code=sm_90 -gencode arch=compute_90,code=compute_90
# The static CUDA runtime: the binary starts where no CUDA is installed, and --device gpu
# then names the missing driver.
GPU_LIBS  := -L$(CUDA_HOME)/lib64 -lcudart_static -ldl -lrt -lpthread
else ifeq ($(GPU),omp)
ifeq ($(wildcard $(CUDA_HOME)/include/cccl/thrust),)
$(error GPU=omp: no Thrust headers under $(CUDA_HOME)/include/cccl; install the CUDA toolkit or set CUDA_HOME)
endif
BUILD     := $(BUILD)-gpu-omp
else ifneq ($(GPU),)
$(error GPU=$(GPU): use GPU=1 (CUDA) or GPU=omp (Thrust's OpenMP backend on the CPU))
endif
export MPIRUN BUILD SANITIZE
NPROC     := $(shell nproc 2>/dev/null || echo 2)
MAKEFLAGS += -j$(NPROC) --no-print-directory

# Sanitizer builds at -O1, as AddressSanitizer's documentation advises for usable speed
# with exact stack traces; it also compiles much faster than -O3. Debug information is
# -g1, the line tables a backtrace, perf or a sanitizer report needs (function, file and
# line), except under DEBUG=1, whose -O0 build is for a debugger and gets -g (local
# variables and types): -g1 compiles a quarter to a third faster than -g.
OPT       := $(if $(DEBUG),-O0,$(if $(SANITIZE),-O1,-O3))
DEBUG_INFO := $(if $(DEBUG),-g,-g1)
# x86-64-v2 (every x86 server since 2009) gives popcnt to the bitmap walks; ARCH=native
# tunes for the build machine.
ARCH      ?= $(if $(filter x86_64,$(shell uname -m)),x86-64-v2)
OPT       += $(if $(ARCH),-march=$(ARCH))
comma     := ,
SAN       := $(if $(SANITIZE),-fsanitize=address$(comma)undefined -fno-omit-frame-pointer)
# Recursive on purpose: pkg-config may only exist once `deps` has run.
SPDLOG_CFLAGS = $(shell pkg-config --cflags spdlog)
SPDLOG_LIBS   = $(shell pkg-config --libs spdlog)
# GCC 12 warns falsely about std::string concatenation at -O3 (GCC bug 105329), and inside
# fmt's format-spec parser (-Wstringop-overflow in fmt/core.h, once a format string with a
# fill or width is checked at compile time); the sanitizer builds check those writes at
# run time.
CXXFLAGS  += -Wno-restrict -Wno-stringop-overflow
CXXFLAGS  += -MMD -MP -DOMPI_SKIP_MPICXX -DMPICH_SKIP_MPICXX -std=c++20 $(OPT) $(DEBUG_INFO) -fopenmp -Wall -Wextra -Wpedantic -I. -Isrc $(SAN)
LDFLAGS   += -fopenmp $(SAN)

LIB_SRCS  := $(filter-out src/data/%_file_io.cpp,$(wildcard src/*/*.cpp strategies/*.cpp)) $(FILE_IO)
LIB_OBJS  := $(LIB_SRCS:%.cpp=$(OBJ_HOME)/obj/%.o)
ifdef GPU
LIB_OBJS  := $(filter-out %/no_gpu.o,$(LIB_OBJS)) $(patsubst %.cu,$(BUILD)/obj/%.o,$(wildcard src/device/*.cu))
endif
APPS      := $(patsubst apps/%.cpp,$(BUILD)/%,$(wildcard apps/*.cpp))
UNIT_OBJS := $(patsubst %.cpp,$(OBJ_HOME)/obj/%.o,$(wildcard tests/unit/*.cpp))
MPI_OBJS  := $(patsubst %.cpp,$(OBJ_HOME)/obj/%.o,$(wildcard tests/mpi/*.cpp))
DEVICE_TEST_OBJS := $(patsubst %.cpp,$(OBJ_HOME)/obj/%.o,$(wildcard tests/device/*.cpp))
TESTS     := $(BUILD)/unit_tests $(BUILD)/mpi_tests
# Under the sanitizers `make test` runs a reduced suite (tests/run_all.sh) that needs only
# the trainer and the generator, not the benchmark apps.
TEST_APPS := $(if $(SANITIZE),$(BUILD)/mpisgd $(BUILD)/gen_data,$(APPS))
# The fuzz targets (fuzz/, see `fuzz:` below), and their corpus replays for `make test`.
FUZZ_TARGETS  := $(basename $(notdir $(wildcard fuzz/*_fuzz.cpp)))
FUZZ_BUILD    ?= build-fuzz
FUZZ_SECONDS  ?= 60
FUZZ_CXX      ?= clang++-14
FUZZ_FLAGS    := -std=c++20 -O1 -g $(if $(ARCH),-march=$(ARCH)) -I. -Isrc \
                 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined
# What each target links: the library files it fuzzes, no MPI.
FUZZ_SRCS_libsvm_parser_fuzz       := src/data/libsvm_parser.cpp src/data/quote.cpp
FUZZ_SRCS_binary_cache_header_fuzz := src/data/cache_header.cpp src/data/crc32c.cpp
FUZZ_REPLAYS  := $(FUZZ_TARGETS:%=$(BUILD)/fuzz/%_replay)

.PHONY: all deps test demo bench bench-allreduce bench-strategies clean fuzz fuzz-replay test-large test-slurm check-layers
.SECONDARY:
all: $(APPS)

deps:
	@scripts/install_deps.sh $(DEPS_FLAGS)

$(OBJ_HOME)/obj/%.o: %.cpp | deps
	@mkdir -p $(dir $@)
	$(CXX) $(CXXFLAGS) $(SPDLOG_CFLAGS) -c $< -o $@

# Thrust's headers as system headers: their own warnings are not ours. -Wpedantic must not
# reach nvcc (a warning per line directive), and host flags go through -Xcompiler.
THRUST_INCLUDES := -isystem $(CUDA_HOME)/include/cccl -isystem $(CUDA_HOME)/include
$(BUILD)/obj/%.o: %.cu | deps
	@mkdir -p $(dir $@)
ifeq ($(GPU),1)
	$(NVCC) -ccbin g++ -std=c++20 $(GPU_ARCH) -O3 -g -MMD -MP -I. -Isrc $(THRUST_INCLUDES) \
	  -Xcompiler -fopenmp$(if $(ARCH),$(comma)-march=$(ARCH)) -c $< -o $@
else
	$(CXX) $(CXXFLAGS) -x c++ -DTHRUST_DEVICE_SYSTEM=THRUST_DEVICE_SYSTEM_OMP $(THRUST_INCLUDES) -c $< -o $@
endif

$(BUILD)/libmpisgd.a: $(LIB_OBJS)
	@rm -f $@
	ar rcs $@ $^

$(BUILD)/%: $(OBJ_HOME)/obj/apps/%.o $(BUILD)/libmpisgd.a
	$(CXX) $(LDFLAGS) $^ -o $@ $(SPDLOG_LIBS) $(GPU_LIBS)

# Catch2's implementation (tests/catch_session.cpp): one object per build, linked after the
# library, so that where it and our code instantiate the same inline function the linker
# keeps our copy. The sanitizer build compiles it uninstrumented, as it is not our code:
# 17 s, where each of the two test mains took 100-121 s compiling it instrumented.
CATCH_OBJ := $(OBJ_HOME)/obj/tests/catch_session.o
$(CATCH_OBJ): SAN :=

$(BUILD)/unit_tests: $(UNIT_OBJS) $(BUILD)/libmpisgd.a $(CATCH_OBJ)
	$(CXX) $(LDFLAGS) $^ -o $@ $(SPDLOG_LIBS)

$(BUILD)/mpi_tests: $(MPI_OBJS) $(BUILD)/libmpisgd.a $(CATCH_OBJ)
	$(CXX) $(LDFLAGS) $^ -o $@ $(SPDLOG_LIBS)

$(BUILD)/device_tests: $(DEVICE_TEST_OBJS) $(BUILD)/libmpisgd.a $(CATCH_OBJ)
	$(CXX) $(LDFLAGS) $^ -o $@ $(SPDLOG_LIBS) $(GPU_LIBS)

ifdef GPU
# The GPU path's tests (tests/device/): its gradients against the CPU path's, and 2-rank
# training runs with --device gpu; where no GPU can run them, each says why it skipped.
test: $(BUILD)/mpisgd $(BUILD)/gen_data $(BUILD)/device_tests
	@tests/device/run_device_tests.sh
else ifdef SIM
# A simulated build is tested against the real one (tests/sim/), whose trainer and data
# generator it needs beside its own trainer and the generator its calibration runs.
test: $(BUILD)/mpisgd $(BUILD)/gen_data
	@$(MAKE) SIM= BUILD=build build/mpisgd build/gen_data
	@tests/sim/simulated_train.sh
else
test: $(TEST_APPS) $(TESTS) $(FUZZ_REPLAYS)
	@tests/run_all.sh
endif

# Includes point down the library's floors (docs/design.md#layers); `make test` runs it too.
check-layers:
	@scripts/check_layers.sh

demo: $(APPS)
	@scripts/demo.sh

bench: $(APPS)
	@scripts/install_deps.sh --bench
	@scripts/bench_foundation.py

# The sparse allreduce micro-benchmark sweep and the strategies on the trainer; both take
# NETWORK=shared|per-rank to run over scripts/slow_network.sh's emulated 1 Gbit/s.
NETWORK ?= none
bench-allreduce: $(APPS)
	@scripts/install_deps.sh --bench
	@scripts/bench_allreduce.sh --network $(NETWORK)

bench-strategies: $(APPS)
	@scripts/install_deps.sh --bench
	@scripts/bench_strategies.py --network $(NETWORK)

# Fuzzing (fuzz/): `make fuzz` builds each target with clang's libFuzzer and the
# sanitizers into $(FUZZ_BUILD) and runs it FUZZ_SECONDS on its checked-in corpus
# (fuzz/corpus/<target>/, never written). `make fuzz-replay` builds the same targets with
# $(CXX) and a plain main() that runs each corpus file once: what `make test` replays.
fuzz: $(FUZZ_TARGETS:%=$(FUZZ_BUILD)/%)
	@fuzz/run.sh $(FUZZ_BUILD) $(FUZZ_SECONDS) $(FUZZ_TARGETS)

.SECONDEXPANSION:
$(FUZZ_BUILD)/%_fuzz: fuzz/%_fuzz.cpp $$(FUZZ_SRCS_$$*_fuzz) $(wildcard src/data/*.h)
	@scripts/install_deps.sh --fuzz
	@mkdir -p $(dir $@)
	$(FUZZ_CXX) $(FUZZ_FLAGS) $< $(FUZZ_SRCS_$*_fuzz) -o $@

fuzz-replay: $(FUZZ_REPLAYS)

fuzz_objs = $(FUZZ_SRCS_$1:%.cpp=$(BUILD)/obj/%.o)
$(BUILD)/fuzz/%_replay: $(BUILD)/obj/fuzz/%.o $(BUILD)/obj/fuzz/replay_main.o $$(call fuzz_objs,$$*)
	@mkdir -p $(dir $@)
	$(CXX) $(LDFLAGS) $^ -o $@

# Files just over 2 GiB and 4 GiB read at P = 1 and 3 (tests/large/large_files.sh): several
# minutes and up to 8 GB of disk under $(LARGE_DIR), removed afterwards.
LARGE_DIR ?= out/large
test-large: $(BUILD)/mpisgd $(BUILD)/gen_data
	@LARGE_DIR=$(LARGE_DIR) tests/large/large_files.sh

# scripts/slurm_train.sh as a 2-task batch job on a one-node Slurm that the test starts and
# stops (tests/slurm/slurm_job.sh); SKIPPED, with the reason, where its daemons cannot run.
test-slurm: $(BUILD)/mpisgd $(BUILD)/gen_data
	@scripts/install_deps.sh --slurm
	@tests/slurm/slurm_job.sh

clean:
	rm -rf $(BUILD)

-include $(shell find $(sort $(BUILD)/obj $(OBJ_HOME)/obj) -name '*.d' 2>/dev/null)
