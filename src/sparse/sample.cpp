#include "sparse/sample.h"

#include <algorithm>
#include <cmath>

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

std::vector<uint32_t> skewed_indices(uint32_t n, uint64_t k, double skew, std::mt19937_64& rng) {
  k = std::min<uint64_t>(k, n);
  std::vector<uint32_t> out;
  out.reserve(k);
  IndexBitmap seen(n);
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  for (int round = 0; out.size() < k && round < 64; ++round) {
    for (uint64_t missing = k - out.size(); missing > 0; --missing) {
      const auto i = static_cast<uint64_t>(static_cast<double>(n) * std::pow(unit(rng), skew));
      const uint64_t idx = std::min<uint64_t>(i, n - 1);
      if (seen.insert(idx)) out.push_back(static_cast<uint32_t>(idx));
    }
  }
  std::uniform_int_distribution<uint32_t> any(0, n - 1);
  while (out.size() < k) {
    const uint32_t idx = any(rng);
    if (seen.insert(idx)) out.push_back(idx);
  }
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace mpisgd
