// The squared loss's batch curvature (sgd/batch_curvature.h), on rows whose largest
// eigenvalue of (1/n) sum x x^T is known.
#include <catch2/catch.hpp>

#include <cmath>
#include <utility>
#include <vector>

#include "mpi_test_util.h"
#include "sgd/batch_curvature.h"

using namespace mpisgd;
using namespace mpisgd::test;

namespace {

Dataset rows_of(const std::vector<std::vector<std::pair<uint32_t, float>>>& rows) {
  Dataset d;
  d.dim = 1000;
  for (const auto& row : rows) {
    for (auto [i, v] : row) {
      d.index.owned().push_back(i);
      d.value.owned().push_back(v);
    }
    d.row_ptr.push_back(d.index.size());
    d.label.push_back(1);
  }
  return d;
}

}  // namespace

TEST_CASE("rows sharing their features curve G times more than orthogonal ones", "[step]") {
  // n copies of x: (1/n) sum x x^T = x x^T, whose eigenvalue is ||x||^2 = 1 + 4 + 4.
  const Dataset same = rows_of(std::vector(16, std::vector<std::pair<uint32_t, float>>{{1, 1}, {5, 2}, {9, -2}}));
  CHECK(on_all_ranks(batch_curvature(same, 8, MPI_COMM_WORLD) == Approx(9.0).epsilon(1e-9)));

  // Rows 2 e_r: the mean of n of them is diag(4 / n), so lambda = ||x||^2 / n.
  std::vector<std::vector<std::pair<uint32_t, float>>> orthogonal;
  for (uint32_t r = 0; r < 32; ++r) orthogonal.push_back({{r, 2}});
  const Dataset apart = rows_of(orthogonal);
  CHECK(on_all_ranks(batch_curvature(apart, 8, MPI_COMM_WORLD) == Approx(0.5)));
  // A batch larger than a rank's rows is estimated on the rows it has.
  CHECK(on_all_ranks(batch_curvature(apart, 1000, MPI_COMM_WORLD) == Approx(4.0 / 32)));
}

TEST_CASE("batch curvature is the largest over ranks, and ranks without rows take part", "[step]") {
  const int rank = world_rank();
  const float scale = static_cast<float>(rank + 1);
  // Rank r holds copies of (r + 1) (e_0 + e_1): lambda = 2 (r + 1)^2, the last rank's
  // the largest, except that even ranks above 0 hold no rows.
  const bool empty = rank > 0 && rank % 2 == 0;
  const Dataset d = empty ? Dataset{} : rows_of(std::vector(4, std::vector<std::pair<uint32_t, float>>{{0, scale}, {1, scale}}));
  int largest = 0;
  for (int r = 0; r < world_size(); ++r)
    if (r == 0 || r % 2 == 1) largest = r;
  const double expected = 2.0 * (largest + 1) * (largest + 1);
  const double got = batch_curvature(d, 4, MPI_COMM_WORLD);
  CHECK(on_all_ranks(got == Approx(expected)));
  // Every rank holds the same bits, so every rank resolves the same lr.
  CHECK(on_all_ranks(on_rank0(std::to_string(got)) == std::to_string(got)));
}

TEST_CASE("batch curvature deals four blocks among the ranks: ceil(4 / P) a rank", "[step]") {
  // Block j of every rank's rows is four copies of sqrt(j + 1) e_0, so lambda = j + 1,
  // and the estimate is the number of blocks a rank took: all four at P = 1, one from
  // P = 4 on.
  std::vector<std::vector<std::pair<uint32_t, float>>> rows;
  for (int j = 0; j < 4; ++j)
    for (int copy = 0; copy < 4; ++copy) rows.push_back({{0, std::sqrt(static_cast<float>(j + 1))}});
  const int per_rank = (4 + world_size() - 1) / world_size();
  CHECK(on_all_ranks(batch_curvature(rows_of(rows), 4, MPI_COMM_WORLD) == Approx(per_rank)));
}
