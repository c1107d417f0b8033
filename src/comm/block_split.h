#pragma once
// The split of n values into P near-equal blocks that the whole job shares: the sums and
// gathers of sum_in_place.h, the split allreduces' and parameter servers' ranges
// (sparse/range.h), and so the feature order's ranking, which is dealt in these blocks.
#include <cstddef>

namespace mpisgd {

// Rank i's block of n values, [n i / P, n (i + 1) / P): sizes differ by at most one.
inline size_t block_begin(size_t n, int i, int ranks) {
  return n * static_cast<size_t>(i) / static_cast<size_t>(ranks);
}

}  // namespace mpisgd
