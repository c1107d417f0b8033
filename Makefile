# mpisgd build. `make` builds, `make test` runs every test, `make demo` trains on a small
# generated set, `make bench` runs the benchmarks. Each first installs what is missing.
# Options: SANITIZE=1 (address+undefined), DEBUG=1 (-O0), GPU=1 (CUDA path, later issue),
# MPI=mpich (Debian's MPICH instead of the default Open MPI, built into build-mpich;
# `make test MPI=mpich` runs the suite under it).

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
# Each MPI and sanitizer build has a folder of its own, so none mixes objects of another.
BUILD     ?= build$(if $(filter mpich,$(MPI)),-mpich)$(if $(SANITIZE),-san)
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
# GCC 12 with the sanitizers warns falsely inside fmt's format-spec parser
# (-Wstringop-overflow in fmt/core.h); AddressSanitizer checks those writes at run time.
SAN       := $(if $(SANITIZE),-fsanitize=address$(comma)undefined -fno-omit-frame-pointer -Wno-stringop-overflow)
# Recursive on purpose: pkg-config may only exist once `deps` has run.
SPDLOG_CFLAGS = $(shell pkg-config --cflags spdlog)
SPDLOG_LIBS   = $(shell pkg-config --libs spdlog)
# GCC 12 warns falsely about std::string concatenation at -O3 (GCC bug 105329).
CXXFLAGS  += -Wno-restrict
CXXFLAGS  += -MMD -MP -DOMPI_SKIP_MPICXX -DMPICH_SKIP_MPICXX -std=c++20 $(OPT) -g -fopenmp -Wall -Wextra -Wpedantic -I. -Isrc $(SAN)
LDFLAGS   += -fopenmp $(SAN)

LIB_SRCS  := $(wildcard src/*/*.cpp strategies/*.cpp)
LIB_OBJS  := $(LIB_SRCS:%.cpp=$(BUILD)/obj/%.o)
APPS      := $(patsubst apps/%.cpp,$(BUILD)/%,$(wildcard apps/*.cpp))
UNIT_OBJS := $(patsubst %.cpp,$(BUILD)/obj/%.o,$(wildcard tests/unit/*.cpp))
MPI_OBJS  := $(patsubst %.cpp,$(BUILD)/obj/%.o,$(wildcard tests/mpi/*.cpp))
TESTS     := $(BUILD)/unit_tests $(BUILD)/mpi_tests
# Under the sanitizers `make test` runs a reduced suite (tests/run_all.sh) that needs only
# the trainer and the generator, not the benchmark apps.
TEST_APPS := $(if $(SANITIZE),$(BUILD)/mpisgd $(BUILD)/gen_data,$(APPS))

.PHONY: all deps test demo bench bench-allreduce bench-strategies clean
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

test: $(TEST_APPS) $(TESTS)
	@tests/run_all.sh

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

clean:
	rm -rf $(BUILD)

-include $(shell find $(BUILD)/obj -name '*.d' 2>/dev/null)
