#pragma once
// allreduce_bench's flags (apps/allreduce_bench.cpp declares them).
#include <cstdint>
#include <string>

#include "collectives/sparse_allreduce.h"

namespace mpisgd::bench {

constexpr int kMaxReps = 1000;

struct Options {
  uint32_t dim = 1 << 20;
  double density = 1e-3;
  std::string dist = "uniform";
  double skew = 3.0;
  std::string algo = "all";
  int reps = 10;
  double min_time = 0.2;
  int rounds = 3;
  int warmup = 1;
  std::string type = "float";
  int group_size = 8;
  int tie_trials = CollectiveConfig{}.tie_trials;
  double tie_seconds = CollectiveConfig{}.tie_seconds;
  double tie_factor = CollectiveConfig{}.tie_factor;
  double dense_switch = -1;  // tuned to the measured network and summation speed
  uint64_t seed = 1;
  int input_sets = 1;
  std::string csv;
  std::string log_level = "warn";
};

}  // namespace mpisgd::bench
