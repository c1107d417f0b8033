#pragma once
// The settings of --strategy local-sgd (strategies/local_sgd.cpp), kept in StrategyFlags.
#include <cstdint>

namespace mpisgd {

struct LocalSgdConfig {
  uint64_t sync_every = 8;  // H: steps each rank takes alone between averages
  bool given = false;       // --sync-every was on the command line
};

}  // namespace mpisgd
