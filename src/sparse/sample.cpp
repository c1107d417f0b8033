#include "sparse/sample.h"

#include <algorithm>

namespace mpisgd {

std::vector<uint32_t> distinct_indices(uint32_t n, uint64_t k, std::mt19937_64& rng) {
  k = std::min<uint64_t>(k, n);
  std::vector<uint32_t> out;
  out.reserve(k);
  IndexBitmap seen(n);
  // Draw j's pick from [0, j]; if it was drawn before, take j itself, new by construction.
  for (uint64_t j = n - k; j < n; ++j) {
    const uint64_t t = std::uniform_int_distribution<uint64_t>(0, j)(rng);
    const uint64_t pick = seen.insert(t) ? t : j;
    if (pick == j) seen.insert(j);
    out.push_back(static_cast<uint32_t>(pick));
  }
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace mpisgd
