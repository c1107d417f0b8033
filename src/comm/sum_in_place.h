#pragma once
// The element-wise sum of a large array over the ranks, in place: the feature counts
// that order the features (data/feature_order.h), N of them a rank, summed once a run.
//
// MPI_Allreduce would do, but Open MPI's first calls on an array this large were dear on
// the 2-core VM of docs/performance.md: a job's one call on the URL-like counts (13 MB)
// took 41-43 ms at P = 2 and 120-129 ms at P = 4, where the same call repeated on one
// buffer settles at 2-4 ms (P = 2). With this exchange in its place the renumbering took
// 0.04 s less at P = 2 and 0.11 s less at P = 4 on those rows, 0.4 s less on
// Webspam-like ones (66 MB; docs/performance.md, "Set-up against the epochs").
//
// It is a reduce-scatter, then an allgather, each P - 1 rounds of pairwise exchanges (in
// round s rank r sends to r + s and hears from r - s), in pieces heard into one buffer of
// a piece and the summed blocks sent straight into place: about 2 N (P - 1) / P values
// in and out a rank, as a bandwidth-optimal allreduce moves. Its 2 (P - 1) latencies
// against a library's 2 log2 P, and P^2 messages a simulator must follow one by one
// (docs/scaling.md), hand large jobs back to MPI_Allreduce.
// Unsigned sums wrap as MPI_SUM's do, so either way the result is MPI_Allreduce's, bit
// for bit.
#include <cstddef>
#include <cstdint>
#include <span>

#include <mpi.h>

#include "comm/block_split.h"

namespace mpisgd {

struct SumInPlace {
  size_t piece = size_t{1} << 16;  // values a message: 256 KB
  int pairwise_ranks = 64;         // the most ranks that exchange pairwise
};

// Collective: every rank passes an array of the same length and gets the sum of all.
void sum_in_place(std::span<uint32_t> values, MPI_Comm comm, const SumInPlace& how = {});

// Collective, sum_in_place's second half: every rank passes an array of the same length
// with its own block filled in and gets every rank's block, by pairwise exchanges only.
// Their P^2 messages are why a caller past SumInPlace::pairwise_ranks does without it.
void gather_blocks_in_place(std::span<uint32_t> values, MPI_Comm comm, size_t piece = SumInPlace{}.piece);

}  // namespace mpisgd
