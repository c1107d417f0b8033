// IndexSet: what a pull lists and a server steps must be each index once, ascending,
// whatever order the inserts came in, and the set must be empty again after a drain.
#include <catch2/catch.hpp>

#include <algorithm>
#include <random>
#include <set>
#include <vector>

#include "ps/index_set.h"

using namespace mpisgd;

TEST_CASE("an index set drains each inserted index once, ascending", "[index_set]") {
  // 300,000 indices: several summary words (4,096 indices each), and the last index of
  // the range, whose word is the last of a partial summary word.
  const uint32_t n = 300'000;
  IndexSet set(n);
  std::mt19937 rng(7);
  std::uniform_int_distribution<uint32_t> any(0, n - 1);
  for (int round = 0; round < 3; ++round) {
    CAPTURE(round);
    std::set<uint32_t> expected = {0, n - 1, 4095, 4096, 63, 64};
    for (int j = 0; j < 5'000; ++j) expected.insert(any(rng));
    std::vector<uint32_t> inserts(expected.begin(), expected.end());
    inserts.insert(inserts.end(), expected.begin(), expected.end());  // each twice
    std::shuffle(inserts.begin(), inserts.end(), rng);
    for (uint32_t i : inserts) set.insert(i);

    std::vector<uint32_t> out = {42};  // drain appends
    set.drain(out);
    REQUIRE(out.size() == expected.size() + 1);
    CHECK(out[0] == 42);
    CHECK(std::equal(out.begin() + 1, out.end(), expected.begin()));

    out.clear();
    set.drain(out);
    CHECK(out.empty());
  }
}
