#pragma once
// Pieces every sparse allreduce shares: folding a non-power-of-two rank count onto a
// power of two, the canonical summation order, and sending streams as raw bytes. The
// split of [0, N) into owned ranges is sparse/range.h's.
#include <cstdint>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include <mpi.h>

#include "comm/counted_comm.h"
#include "sparse/stream.h"

namespace mpisgd {

// Message tags, one per phase, so that a rank already in its next phase can never have
// its message taken by a receive of the previous one.
enum CollectiveTag : int { kTagFoldIn = 101, kTagFoldOut, kTagStage, kTagSplit };

inline int floor_log2(int p) {
  int l = 0;
  while ((2 << l) <= p) ++l;
  return l;
}

// Rabenseifner's fold (as in MPICH's allreduce): with P = p2 + rem ranks, p2 a power of
// two, the even ranks below 2 rem hand their data to the odd rank above them before the
// power-of-two algorithm, and get the result back after it. Cost: two extra messages.
struct Fold {
  int p2 = 1, rem = 0;
  int new_rank = -1;  // rank among the p2 that stay; -1 for a rank folded out

  Fold(int rank, int size) : p2(1 << floor_log2(size)), rem(size - p2) {
    if (rank < 2 * rem) {
      new_rank = rank % 2 ? rank / 2 : -1;
    } else {
      new_rank = rank - rem;
    }
  }
  bool folded_out() const { return new_rank < 0; }
  int old_rank(int nr) const { return nr < rem ? 2 * nr + 1 : nr + rem; }
  // Owned ranges new rank `nr` holds after the fold: [first, last].
  int first_part(int nr) const { return nr < rem ? 2 * nr : nr + rem; }
  int last_part(int nr) const { return nr < rem ? 2 * nr + 1 : nr + rem; }
};

// The summation tree of SSAR_Rec_Dbl over parts 0..P-1, as (into, from) pairs, children
// before parents: the fold's pairs (2i, 2i+1), then recursive doubling over what is left.
// Summing in this order gives every algorithm built on it the same result bit for bit.
inline std::vector<std::pair<int, int>> canonical_sum_order(int parts) {
  const Fold fold(0, parts);
  std::vector<std::pair<int, int>> order;
  for (int i = 0; i < fold.rem; ++i) order.emplace_back(2 * i, 2 * i + 1);
  for (int mask = 1; mask < fold.p2; mask <<= 1) {
    for (int nr = 0; nr < fold.p2; nr += 2 * mask) order.emplace_back(fold.first_part(nr), fold.first_part(nr + mask));
  }
  return order;
}

// The group size early-switching DSAR uses on `ranks` ranks when asked for `requested`:
// the largest divisor of `ranks` not above it (dsar_early.cpp).
int early_dsar_group(int ranks, int requested);

// Streams travel as raw bytes; MPI counts are int, so one stream is at most 2 GiB. Called
// by each algorithm's factory before it makes anything; std::invalid_argument is how a
// factory reports a configuration that cannot work (the trainer makes it a start-up error).
template <class V>
void check_message_size(uint64_t dim, const char* algorithm) {
  if (Stream<V>::capacity_bytes(dim) > static_cast<uint64_t>(INT32_MAX)) {
    throw std::invalid_argument(std::string(algorithm) + ": N = " + std::to_string(dim) +
                                " features make a dense stream larger than one MPI message (2 GiB); "
                                "use --strategy allreduce, or fewer features (--dim)");
  }
}

template <class V>
void send_stream(CountedComm& comm, const Stream<V>& s, int dest, int tag) {
  comm.send(s.data(), static_cast<int>(s.bytes()), MPI_BYTE, dest, tag);
}

template <class V>
void recv_stream(CountedComm& comm, Stream<V>& s, int source, int tag) {
  comm.recv(s.data(), static_cast<int>(s.capacity()), MPI_BYTE, source, tag);
}

template <class V>
void exchange_streams(CountedComm& comm, const Stream<V>& out, Stream<V>& in, int partner, int tag) {
  comm.sendrecv(out.data(), static_cast<int>(out.bytes()), in.data(), static_cast<int>(in.capacity()), MPI_BYTE,
                partner, tag);
}

// The fold's first step: a rank folded out hands `data` to the rank above it, which
// receives it into `in` and calls combine() to take it into its own `data`.
template <class V, class Combine>
void fold_in(CountedComm& comm, const Fold& fold, const Stream<V>& data, Stream<V>& in, Combine combine) {
  const int rank = comm.rank();
  if (rank >= 2 * fold.rem) return;
  if (fold.folded_out()) {
    send_stream(comm, data, rank + 1, kTagFoldIn);
  } else {
    recv_stream(comm, in, rank - 1, kTagFoldIn);
    combine();
  }
}

// The fold's last step: a rank folded out receives the result from the rank it handed
// its data to.
template <class V>
void fold_out(CountedComm& comm, const Fold& fold, Stream<V>& result) {
  const int rank = comm.rank();
  if (rank >= 2 * fold.rem) return;
  if (fold.folded_out()) {
    recv_stream(comm, result, rank + 1, kTagFoldOut);
  } else {
    send_stream(comm, result, rank - 1, kTagFoldOut);
  }
}

}  // namespace mpisgd
