#pragma once
// What every allreduce under test must give: MPI_Allreduce of the ranks' inputs scattered
// dense, with a tolerance per value, |got - want| <= 1e-5 (|want| + sum |inputs|), that
// allows for any summation order yet catches a missing or doubled contribution.
#include <spdlog/spdlog.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <span>
#include <string>
#include <vector>

#include <mpi.h>

#include "comm/counted_comm.h"
#include "sparse/range.h"
#include "sparse/stream.h"
#include "sparse/stream_sum.h"

namespace mpisgd::bench {

// Sums `v` over all ranks in pieces MPI's int counts can take (uncounted: this is the
// reference, not an algorithm under test).
template <class V>
void reference_sum(std::vector<V>& v, MPI_Comm comm) {
  for (size_t done = 0; done < v.size();) {
    const size_t count = std::min(kMaxMpiCount, v.size() - done);
    MPI_Allreduce(MPI_IN_PLACE, v.data() + done, static_cast<int>(count), mpi_type<V>(), MPI_SUM, comm);
    done += count;
  }
}

template <class V>
class ReferenceSum {
 public:
  // Collective: the sum of every rank's (index, value) pairs over [0, dim).
  ReferenceSum(std::span<const uint32_t> index, std::span<const V> value, uint32_t dim, MPI_Comm comm)
      : comm_(comm), want_(dim, V{0}), tol_(dim, V{0}) {
    for (size_t j = 0; j < index.size(); ++j) {
      want_[index[j]] = value[j];
      tol_[index[j]] = std::abs(value[j]);
    }
    reference_sum(want_, comm);
    reference_sum(tol_, comm);
    for (uint32_t i = 0; i < dim; ++i) {
      tol_[i] = static_cast<V>(1e-5 * (std::abs(static_cast<double>(want_[i])) + static_cast<double>(tol_[i])));
      nonzeros_ += want_[i] != V{0};
    }
  }

  uint64_t nonzeros() const { return nonzeros_; }

  // Collective: every rank's `result` against the sum; true if all match. A lossy
  // algorithm's result is checked with what the ranks `dropped` added back: conservation.
  bool verify(const std::string& name, const Stream<V>& result, const Stream<V>* dropped = nullptr) const {
    const auto dim = static_cast<uint32_t>(want_.size());
    std::vector<V> got(dim);
    write_dense(result, Range{0, dim}, got.data());
    if (dropped) {
      std::vector<V> lost(dim);
      write_dense(*dropped, Range{0, dim}, lost.data());
      reference_sum(lost, comm_);
      for (uint32_t i = 0; i < dim; ++i) got[i] += lost[i];
    }
    uint64_t bad = 0, first = 0;
    for (uint32_t i = 0; i < dim; ++i) {
      const double diff = std::abs(static_cast<double>(got[i]) - static_cast<double>(want_[i]));
      if (!(diff <= static_cast<double>(tol_[i]))) {  // also catches NaN
        if (bad++ == 0) first = i;
      }
    }
    int rank = 0;
    MPI_Comm_rank(comm_, &rank);
    if (bad) {
      spdlog::error("{}: WRONG RESULT on rank {}: {} of {} values{} differ from MPI_Allreduce; first at index {}: "
                    "got {}, want {} (result {} with {} items)",
                    name, rank, bad, dim, dropped ? " of result + dropped" : "", first, got[first], want_[first],
                    result.is_dense() ? "dense" : "sparse", result.count());
    }
    uint64_t total = bad;
    MPI_Allreduce(MPI_IN_PLACE, &total, 1, MPI_UINT64_T, MPI_SUM, comm_);
    if (total && rank == 0) {
      std::fprintf(stderr, "allreduce_bench: ERROR: %s gives a wrong %s (%llu wrong values over all ranks)\n",
                   name.c_str(), dropped ? "sum of result and dropped" : "sum",
                   static_cast<unsigned long long>(total));
    }
    return total == 0;
  }

 private:
  MPI_Comm comm_;
  std::vector<V> want_, tol_;
  uint64_t nonzeros_ = 0;
};

}  // namespace mpisgd::bench
