#pragma once
// The settings of --strategy local-sgd (strategies/local_sgd.cpp), kept in StrategyFlags.
#include <cstdint>

namespace mpisgd {

struct LocalSgdConfig {
  uint64_t sync_every = 0;  // H: steps each rank takes alone between averages; 0: auto
  bool given() const { return sync_every > 0; }
};

}  // namespace mpisgd
