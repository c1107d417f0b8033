#pragma once
// Seeded Fisher-Yates shuffle with our own generator (sparse/random.h), so a given
// (seed, rank, epoch) gives the same order with any standard library.
#include <cstdint>
#include <vector>

#include "sparse/random.h"

namespace mpisgd {

inline void shuffle_rows(std::vector<uint64_t>& order, uint64_t seed, int rank, int epoch) {
  uint64_t state = seed * 0xD1B54A32D192ED03ull ^ (static_cast<uint64_t>(rank) << 32) ^ static_cast<uint64_t>(epoch);
  splitmix64(state);
  for (uint64_t i = order.size(); i > 1; --i) std::swap(order[i - 1], order[draw_below(state, i)]);
}

}  // namespace mpisgd
