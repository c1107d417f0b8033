#include "sgd/batch_curvature.h"

#include <algorithm>
#include <cmath>
#include <vector>

namespace mpisgd {
namespace {

constexpr int kBlocks = 4;
constexpr int kRounds = 30;

// lambda_max of (1/n) X^T X for rows [first, first + n).
double block_curvature(const Dataset& d, uint64_t first, uint64_t n) {
  const uint64_t begin = d.row_ptr[first], end = d.row_ptr[first + n];
  std::vector<uint32_t> features(d.index.begin() + begin, d.index.begin() + end);
  std::sort(features.begin(), features.end());
  features.erase(std::unique(features.begin(), features.end()), features.end());
  if (features.empty()) return 0;
  // Each entry's column in the block's compact feature numbering.
  std::vector<uint32_t> column(end - begin);
  for (uint64_t e = begin; e < end; ++e)
    column[e - begin] =
        static_cast<uint32_t>(std::lower_bound(features.begin(), features.end(), d.index[e]) - features.begin());

  std::vector<double> v(features.size(), 1.0 / std::sqrt(static_cast<double>(features.size())));
  std::vector<double> next(features.size());
  double lambda = 0;
  for (int round = 0; round < kRounds; ++round) {
    std::fill(next.begin(), next.end(), 0.0);
    for (uint64_t r = first; r < first + n; ++r) {
      double dot = 0;
      for (uint64_t e = d.row_ptr[r]; e < d.row_ptr[r + 1]; ++e) dot += d.value[e] * v[column[e - begin]];
      for (uint64_t e = d.row_ptr[r]; e < d.row_ptr[r + 1]; ++e) next[column[e - begin]] += d.value[e] * dot;
    }
    double norm = 0;
    for (double& x : next) {
      x /= static_cast<double>(n);
      norm += x * x;
    }
    norm = std::sqrt(norm);
    lambda = norm;  // v has unit length, so ||M v|| is the estimate
    if (norm == 0) break;
    for (size_t i = 0; i < v.size(); ++i) v[i] = next[i] / norm;
  }
  return lambda;
}

}  // namespace

double batch_curvature(const Dataset& d, uint64_t global_batch, MPI_Comm comm) {
  double mine = 0;
  const uint64_t n = std::max<uint64_t>(1, std::min(global_batch, d.rows()));
  for (int b = 0; b < kBlocks && (b + 1) * n <= d.rows(); ++b)
    mine = std::max(mine, block_curvature(d, b * n, n));
  double all = 0;
  MPI_Allreduce(&mine, &all, 1, MPI_DOUBLE, MPI_MAX, comm);
  return all;
}

}  // namespace mpisgd
