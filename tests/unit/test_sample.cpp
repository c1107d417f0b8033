#include <catch2/catch.hpp>

#include <algorithm>
#include <random>

#include "sparse/sample.h"

using namespace mpisgd;

TEST_CASE("sampled index sets are distinct, ascending and in range", "[sample]") {
  const uint32_t n = GENERATE(1u, 7u, 1000u);
  const uint64_t k = GENERATE(0u, 1u, 5u, 1000u, 5000u);
  std::mt19937_64 rng(n * 31 + k);
  for (const auto& set : {distinct_indices(n, k, rng), skewed_indices(n, k, 3.0, rng)}) {
    CAPTURE(n, k);
    CHECK(set.size() == std::min<uint64_t>(k, n));
    CHECK(std::adjacent_find(set.begin(), set.end(), std::greater_equal<>()) == set.end());
    CHECK(std::all_of(set.begin(), set.end(), [n](uint32_t i) { return i < n; }));
  }
}

TEST_CASE("skewed index sets favour low indices", "[sample]") {
  std::mt19937_64 rng(5);
  const uint32_t n = 100000;
  // Under floor(n u^3) an index is below n/8 with probability 1/2; under uniform, 1/8.
  const std::vector<uint32_t> skewed = skewed_indices(n, 2000, 3.0, rng), flat = distinct_indices(n, 2000, rng);
  auto below = [n](const std::vector<uint32_t>& set) {
    return std::count_if(set.begin(), set.end(), [n](uint32_t i) { return i < n / 8; });
  };
  CHECK(below(skewed) > 800);
  CHECK(below(flat) < 400);
}
