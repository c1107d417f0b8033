#include "comm/prefix_sum.h"

#include <cstddef>
#include <vector>

namespace mpisgd {

RankSums sums_across_ranks(MPI_Comm comm, uint64_t value) {
  int rank = 0, size = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  std::vector<uint64_t> all(static_cast<size_t>(size));
  MPI_Allgather(&value, 1, MPI_UINT64_T, all.data(), 1, MPI_UINT64_T, comm);
  RankSums sums{0, 0};
  for (int r = 0; r < size; ++r) {
    sums.total += all[static_cast<size_t>(r)];
    if (r < rank) sums.below += all[static_cast<size_t>(r)];
  }
  return sums;
}

}  // namespace mpisgd
