#pragma once
// The ranks' inputs of the collectives' tests (test_collectives.cpp, the lossless sparse
// allreduces; test_topk_collectives.cpp, the top-k ones): one rank's sparse contribution
// drawn from a named pattern of index sets, its values small non-zero integers so that
// every sum is exact in float whatever the order of the additions.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "mpi_test_util.h"
#include "sparse/sample.h"

namespace mpisgd::test {

// One rank's contribution, indices ascending.
template <class V>
struct Contribution {
  std::vector<uint32_t> index;
  std::vector<V> value;
};

enum class Kind {
  kRandom,     // `density` N distinct uniform indices per rank, chosen independently
  kIdentical,  // the same `density` N indices on every rank
  kDisjoint,   // each index has one owner rank; a rank takes `density` of its own
  kPowerLaw,   // density N draws of floor(N u^3), deduplicated: low indices are hot
  kMixed,      // as kRandom; the test sends odd ranks' streams dense
  kSomeEmpty,  // as kRandom on ranks 0, 3, 6, ...; the others contribute nothing
};

struct Pattern {
  Kind kind;
  double density;
  std::string name() const {
    static const char* names[] = {"random",    "identical",          "disjoint",
                                  "power-law", "mixed dense/sparse", "some ranks empty"};
    std::ostringstream s;
    s << names[static_cast<int>(kind)] << " " << density;
    return s.str();
  }
};

// Rank `rank` of `size`'s contribution to a vector of `n` values, the same for the same
// `seed` on every run; values are non-zero integers in [-largest, largest], so sums over
// up to 2^24 / largest ranks are exact in float.
template <class V>
Contribution<V> contribution(const Pattern& pattern, uint32_t n, int rank, int size, uint64_t seed, int largest) {
  std::mt19937_64 shared(seed), own(seed * 7919 + static_cast<uint64_t>(rank) + 1);
  Contribution<V> c;
  switch (pattern.kind) {
    case Kind::kRandom:
    case Kind::kMixed:
      c.index = distinct_indices(n, items(pattern.density, n), own);
      break;
    case Kind::kSomeEmpty:
      if (rank % 3 == 0) c.index = distinct_indices(n, items(pattern.density, n), own);
      break;
    case Kind::kIdentical:
      c.index = distinct_indices(n, items(pattern.density, n), shared);
      break;
    case Kind::kDisjoint: {
      // The owner of index i is a shared random rank; this rank keeps a share of its own.
      std::uniform_int_distribution<int> owner(0, size - 1);
      std::uniform_real_distribution<double> u(0, 1);
      for (uint32_t i = 0; i < n; ++i) {
        const bool mine = owner(shared) == rank;
        const bool keep = u(own) < pattern.density;
        if (mine && keep) c.index.push_back(i);
      }
      break;
    }
    case Kind::kPowerLaw: {
      std::uniform_real_distribution<double> u(0, 1);
      for (uint64_t j = 0; j < items(pattern.density, n); ++j) {
        const double x = u(own);
        c.index.push_back(std::min(n - 1, static_cast<uint32_t>(std::floor(n * x * x * x))));
      }
      std::sort(c.index.begin(), c.index.end());
      c.index.erase(std::unique(c.index.begin(), c.index.end()), c.index.end());
      break;
    }
  }
  std::uniform_int_distribution<int> magnitude(1, largest);
  for (size_t j = 0; j < c.index.size(); ++j) {
    const int sign = own() % 2 ? 1 : -1;
    c.value.push_back(static_cast<V>(sign * magnitude(own)));
  }
  return c;
}

}  // namespace mpisgd::test
