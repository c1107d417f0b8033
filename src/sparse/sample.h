#pragma once
// Random index sets, for the synthetic sparse inputs of the tests and the benchmarks: one
// sampler, so that every input of a given seed is drawn alike.
#include <cstdint>
#include <random>
#include <vector>

namespace mpisgd {

// A set of indices below n, one bit each.
class IndexBitmap {
 public:
  explicit IndexBitmap(uint64_t n) : words_((n + 63) / 64, 0) {}
  // Adds i; returns whether it was new.
  bool insert(uint64_t i) {
    uint64_t& w = words_[i / 64];
    const uint64_t bit = uint64_t{1} << (i % 64);
    if (w & bit) return false;
    w |= bit;
    return true;
  }

 private:
  std::vector<uint64_t> words_;
};

// k distinct indices of [0, n), ascending, every k-subset equally likely (Floyd's
// algorithm: k draws, whatever k is against n); all of [0, n) when k >= n.
std::vector<uint32_t> distinct_indices(uint32_t n, uint64_t k, std::mt19937_64& rng);

// k distinct indices of [0, n), ascending, skewed to low ones: floor(n u^skew) for u
// uniform in [0, 1), so index i is drawn with probability ~ (i/n)^(1/skew - 1) and sets
// drawn by several ranks overlap far more than uniform ones. Duplicates are dropped and
// more drawn until there are k (after many rounds, uniform draws fill in the rest).
std::vector<uint32_t> skewed_indices(uint32_t n, uint64_t k, double skew, std::mt19937_64& rng);

}  // namespace mpisgd
