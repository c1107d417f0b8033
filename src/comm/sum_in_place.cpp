#include "comm/sum_in_place.h"

#include <algorithm>
#include <vector>

#include "comm/counted_comm.h"

namespace mpisgd {
namespace {

constexpr int kTagSum = 41;

struct Blocks {
  size_t n;
  int p;
  size_t begin(int i) const { return block_begin(n, i, p); }
  size_t end(int i) const { return begin(i + 1); }
  size_t largest() const { return (n + static_cast<size_t>(p) - 1) / static_cast<size_t>(p); }
  size_t pieces(size_t piece) const { return (largest() + piece - 1) / piece; }
};

// Piece k of block i: empty past the block's end, so that every rank, counting pieces of
// the largest block, makes as many exchanges a round as its partners do.
struct Piece {
  size_t at, count;
};
Piece piece_of(const Blocks& b, int i, size_t k, size_t piece) {
  const size_t at = std::min(b.end(i), b.begin(i) + k * piece);
  return {at, std::min(b.end(i), at + piece) - at};
}

// The allgather of pairwise exchanges: round s hands this rank's block to rank r + s and
// takes r - s's.
void gather_pairwise(uint32_t* v, const Blocks& blocks, int rank, size_t piece, MPI_Comm comm) {
  const int size = blocks.p;
  for (int s = 1; s < size; ++s) {
    const int to = (rank + s) % size, from = (rank - s + size) % size;
    for (size_t k = 0; k < blocks.pieces(piece); ++k) {
      const Piece out = piece_of(blocks, rank, k, piece), in = piece_of(blocks, from, k, piece);
      MPI_Sendrecv(v + out.at, static_cast<int>(out.count), MPI_UINT32_T, to, kTagSum, v + in.at,
                   static_cast<int>(in.count), MPI_UINT32_T, from, kTagSum, comm, MPI_STATUS_IGNORE);
    }
  }
}

}  // namespace

void gather_blocks_in_place(std::span<uint32_t> values, MPI_Comm comm, size_t piece) {
  int rank = 0, size = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  gather_pairwise(values.data(), Blocks{values.size(), size}, rank, piece, comm);
}

void sum_in_place(std::span<uint32_t> values, MPI_Comm comm, const SumInPlace& how) {
  int rank = 0, size = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  if (size == 1) return;
  if (size > how.pairwise_ranks) {
    for (size_t at = 0; at < values.size(); at += kMaxMpiCount) {
      const int n = static_cast<int>(std::min(values.size() - at, kMaxMpiCount));
      MPI_Allreduce(MPI_IN_PLACE, values.data() + at, n, MPI_UINT32_T, MPI_SUM, comm);
    }
    return;
  }
  const size_t piece = how.piece;
  const Blocks blocks{values.size(), size};
  const size_t pieces = blocks.pieces(piece);
  std::vector<uint32_t> heard(std::min(piece, blocks.largest()));
  uint32_t* v = values.data();
  // Reduce-scatter: round s adds rank r - s's values of this rank's block to its own.
  for (int s = 1; s < size; ++s) {
    const int to = (rank + s) % size, from = (rank - s + size) % size;
    for (size_t k = 0; k < pieces; ++k) {
      const Piece out = piece_of(blocks, to, k, piece), in = piece_of(blocks, rank, k, piece);
      MPI_Sendrecv(v + out.at, static_cast<int>(out.count), MPI_UINT32_T, to, kTagSum, heard.data(),
                   static_cast<int>(in.count), MPI_UINT32_T, from, kTagSum, comm, MPI_STATUS_IGNORE);
      for (size_t j = 0; j < in.count; ++j) v[in.at + j] += heard[j];
    }
  }
  gather_pairwise(v, blocks, rank, piece, comm);
}

}  // namespace mpisgd
