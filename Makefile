# mpisgd build. `make` builds, `make test` runs every test, `make demo` trains on a small
# generated set, `make bench` runs the benchmarks. Each first installs what is missing.
# Options: SANITIZE=1 (address+undefined), DEBUG=1 (-O0), GPU=1 (CUDA path, later issue),
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
export MPIRUN BUILD SANITIZE
NPROC     := $(shell nproc 2>/dev/null || echo 2)
MAKEFLAGS += -j$(NPROC) --no-print-directory

# Sanitizer builds at -O1, as AddressSanitizer's documentation advises for usable speed
# with exact stack traces; it also compiles much faster than -O3.
OPT       := $(if $(DEBUG),-O0,$(if $(SANITIZE),-O1,-O3))
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
CXXFLAGS  += -MMD -MP -DOMPI_SKIP_MPICXX -DMPICH_SKIP_MPICXX -std=c++20 $(OPT) -g -fopenmp -Wall -Wextra -Wpedantic -I. -Isrc $(SAN)
LDFLAGS   += -fopenmp $(SAN)

LIB_SRCS  := $(filter-out src/data/%_file_io.cpp,$(wildcard src/*/*.cpp strategies/*.cpp)) $(FILE_IO)
LIB_OBJS  := $(LIB_SRCS:%.cpp=$(BUILD)/obj/%.o)
APPS      := $(patsubst apps/%.cpp,$(BUILD)/%,$(wildcard apps/*.cpp))
UNIT_OBJS := $(patsubst %.cpp,$(BUILD)/obj/%.o,$(wildcard tests/unit/*.cpp))
MPI_OBJS  := $(patsubst %.cpp,$(BUILD)/obj/%.o,$(wildcard tests/mpi/*.cpp))
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

$(BUILD)/obj/%.o: %.cpp | deps
	@mkdir -p $(dir $@)
	$(CXX) $(CXXFLAGS) $(SPDLOG_CFLAGS) -c $< -o $@

$(BUILD)/libmpisgd.a: $(LIB_OBJS)
	@rm -f $@
	ar rcs $@ $^

$(BUILD)/%: $(BUILD)/obj/apps/%.o $(BUILD)/libmpisgd.a
	$(CXX) $(LDFLAGS) $^ -o $@ $(SPDLOG_LIBS)

$(BUILD)/unit_tests: $(UNIT_OBJS) $(BUILD)/libmpisgd.a
	$(CXX) $(LDFLAGS) $^ -o $@ $(SPDLOG_LIBS)

$(BUILD)/mpi_tests: $(MPI_OBJS) $(BUILD)/libmpisgd.a
	$(CXX) $(LDFLAGS) $^ -o $@ $(SPDLOG_LIBS)

ifdef SIM
# A simulated build is tested against the real one (tests/sim/), whose trainer and data
# generator it needs beside its own trainer.
test: $(BUILD)/mpisgd
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

-include $(shell find $(BUILD)/obj -name '*.d' 2>/dev/null)
