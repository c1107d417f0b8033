// FeatureOrder::by_popularity over ranks: the order of the counts of all rows, whoever
// holds them (a parameter server's rank holds none), the same on every rank.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdint>
#include <random>
#include <vector>

#include "data/feature_order.h"
#include "mpi_test_util.h"

using namespace mpisgd;
using namespace mpisgd::test;

TEST_CASE("feature order: by popularity over ranks equals the order of the global counts", "[feature_order]") {
  const uint32_t dim = 5003;
  const int rows = 400;
  // Row r, the same on every rank; rank p holds rows p, p + P', ... of the P' = P - 1
  // ranks that read (the last rank, as a server would, holds none).
  auto row = [dim](int r) {
    std::mt19937_64 rng(static_cast<uint64_t>(r) + 1);
    std::vector<uint32_t> index;
    for (uint32_t i = 0; i < dim; ++i)
      if (rng() % (1 + i / 8) == 0) index.push_back(i);  // popularity falls with the index
    return index;
  };
  const int readers = std::max(1, world_size() - 1);
  std::vector<uint32_t> counts(dim, 0);
  Dataset mine;
  mine.dim = dim;
  for (int r = 0; r < rows; ++r) {
    const std::vector<uint32_t> index = row(r);
    for (uint32_t i : index) ++counts[i];
    if (world_rank() >= readers || r % readers != world_rank()) continue;
    for (uint32_t i : index) {
      mine.index.owned().push_back(i);
      mine.value.owned().push_back(1.0f);
    }
    mine.row_ptr.push_back(mine.index.size());
    mine.label.push_back(1.0f);
  }
  // The divided ranking, its gather in several pieces, and the path of jobs past the
  // pairwise exchanges (here any P > 1), where every rank ranks all N.
  const SumInPlace how = GENERATE(SumInPlace{}, SumInPlace{7, 64}, SumInPlace{7, 1});
  CAPTURE(how.piece, how.pairwise_ranks);
  const FeatureOrder got = FeatureOrder::by_popularity(mine, MPI_COMM_WORLD, how);
  const FeatureOrder want = FeatureOrder::from_counts(counts, FeatureOrder::stripes_for(world_size()));
  bool same = got.dim() == dim;
  for (uint32_t f = 0; same && f < dim; ++f) same = got.internal(f) == want.internal(f);
  CHECK(on_all_ranks(same));
}
