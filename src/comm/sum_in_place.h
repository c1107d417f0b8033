#pragma once
// The element-wise sum of a large array over the ranks, in place: the feature counts
// that order the features (data/feature_order.h), N of them a rank, summed once a run.
//
// MPI_Allreduce would do, but its first calls on an array this large are dear where
// first uses of memory are, as on the 2-core VM of docs/performance.md: the one call of
// a job on the URL-like counts (13 MB) took 41-43 ms at P = 2 and 120-129 ms at P = 4,
// where later calls on the same buffer settle at 2-4 ms (P = 2), and the renumbering
// took 0.04 s less at P = 2 and 0.11 s less at P = 4 with this exchange in its place,
// 0.4 s less on Webspam-like rows (66 MB; docs/performance.md, "Set-up against the
// epochs"). It is a reduce-scatter, then an allgather, each P - 1 rounds of pairwise
// exchanges (in round s rank r sends to r + s and hears from r - s), in pieces of at most
// `piece` values heard into one buffer of that size and the summed blocks sent straight
// into place: about 2 N (P - 1) / P values in and out a rank, as a bandwidth-optimal
// allreduce moves.
// Unsigned sums wrap as MPI_SUM's do, so the result is MPI_Allreduce's, bit for bit.
#include <cstddef>
#include <cstdint>
#include <span>

#include <mpi.h>

namespace mpisgd {

constexpr size_t kSumPiece = size_t{1} << 16;  // 256 KB of uint32

// Collective: every rank passes an array of the same length and gets the sum of all.
void sum_in_place(std::span<uint32_t> values, MPI_Comm comm, size_t piece = kSumPiece);

}  // namespace mpisgd
