#pragma once
// The sum of a value over the ranks below this one (0 on rank 0), for the loaders' row,
// line and non-zero offsets. MPI_Exscan would do, but SimGrid 3.32's SMPI runs it as
// every rank messaging every rank above it at once, which its network model re-solves
// flow by flow: 0.38 s of wall time at P = 64, 12 s at P = 128, and a simulated trainer
// at P = 256 had not finished loading after 15 minutes. An allgather of one value a rank
// costs the same on a real MPI and stays cheap to simulate, and it brings the total over
// all ranks with it, which a loader needs beside the offset.
#include <cstdint>

#include <mpi.h>

namespace mpisgd {

struct RankSums {
  uint64_t below;  // over the ranks below this one
  uint64_t total;  // over all ranks
};

RankSums sums_across_ranks(MPI_Comm comm, uint64_t value);
inline uint64_t sum_below_rank(MPI_Comm comm, uint64_t value) { return sums_across_ranks(comm, value).below; }

}  // namespace mpisgd
