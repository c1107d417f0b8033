#pragma once
// Checks the top-k collectives' tests share: a stream's dense form, its sum over all
// ranks, and whether it is a well-formed stream over [0, n).
#include <cstdint>
#include <vector>

#include <mpi.h>

#include "comm/counted_comm.h"
#include "sparse/stream_sum.h"

namespace mpisgd::test {

template <class V>
std::vector<V> dense_of(const Stream<V>& s, uint32_t n) {
  std::vector<V> d(n, V{0});
  write_dense(s, {0, n}, d.data());
  return d;
}

// Elementwise `op` over every rank's `d` (MPI_SUM: the reference an allreduce must match).
template <class V>
std::vector<V> summed(std::vector<V> d, MPI_Op op = MPI_SUM) {
  if (!d.empty()) MPI_Allreduce(MPI_IN_PLACE, d.data(), static_cast<int>(d.size()), mpi_type<V>(), op, MPI_COMM_WORLD);
  return d;
}

// A dense stream covers [0, n); a sparse one has distinct ascending indices below n.
template <class V>
bool well_formed(const Stream<V>& s, uint32_t n) {
  if (s.is_dense()) return s.count() == n;
  const auto pairs = s.pairs();
  for (size_t j = 0; j < pairs.size(); ++j) {
    if (pairs[j].index >= n || (j > 0 && pairs[j].index <= pairs[j - 1].index)) return false;
  }
  return true;
}

}  // namespace mpisgd::test
