#pragma once
// A range of feature indices, and the split of [0, N) into near-equal ranges that the
// split allreduces, the parameter servers' shards and the feature order's stripes all
// use, so that their ranges line up.
#include <cstdint>

#include "comm/block_split.h"

namespace mpisgd {

struct Range {
  uint32_t begin = 0, end = 0;
  uint32_t length() const { return end - begin; }
};

// Range i of `parts` near-equal ranges of [0, n); works for n < parts (some are empty).
inline Range owned_range(uint32_t n, int parts, int i) {
  auto at = [&](int j) { return static_cast<uint32_t>(block_begin(n, j, parts)); };
  return {at(i), at(i + 1)};
}

}  // namespace mpisgd
