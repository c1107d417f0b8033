#pragma once
// Pieces every sparse allreduce shares: folding a non-power-of-two rank count onto a
// power of two, the canonical summation order, and sending streams as raw bytes. The
// split of [0, N) into owned ranges is sparse/range.h's.
#include <cstdint>
#include <span>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include <mpi.h>

#include "comm/counted_comm.h"
#include "sparse/packed_stream.h"
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

// How a collective's streams cross: as they are, or packed into runs
// (sparse/packed_stream.h) where `runs` is set: for a model of K >= 2 columns, whose
// updates are runs of K indices (CollectiveConfig::packs()). Streams are received into
// their own buffers and unpacked there, so the streams the algorithm holds are never in
// packed form. Sends in flight together (isend) each take a slot of their own, numbered
// by the algorithm.
template <class V>
class StreamWire {
 public:
  StreamWire(CountedComm& comm, bool runs) : comm_(comm), runs_(runs) {}

  CountedComm& comm() { return comm_; }

  void send(const Stream<V>& s, int dest, int tag) {
    const auto w = wire(s, out_);
    comm_.send(w.data(), static_cast<int>(w.size()), MPI_BYTE, dest, tag);
  }
  void recv(Stream<V>& s, int source, int tag) {
    received(s, comm_.recv(s.data(), static_cast<int>(s.capacity()), MPI_BYTE, source, tag));
  }
  void exchange(const Stream<V>& out, Stream<V>& in, int partner, int tag) {
    const auto w = wire(out, out_);
    received(in, comm_.sendrecv(w.data(), static_cast<int>(w.size()), in.data(), static_cast<int>(in.capacity()),
                                MPI_BYTE, partner, tag));
  }
  MPI_Request isend(const Stream<V>& s, int slot, int dest, int tag, MPI_Comm on = MPI_COMM_NULL) {
    if (runs_ && sends_.size() <= static_cast<size_t>(slot)) sends_.resize(slot + 1);
    const auto w = runs_ ? wire(s, sends_[slot]) : wire(s, out_);
    return comm_.isend(w.data(), static_cast<int>(w.size()), MPI_BYTE, dest, tag, on);
  }
  // Completed by the communicator's wait_received or wait_any_received, whose byte count
  // then goes to received().
  MPI_Request irecv(Stream<V>& s, int source, int tag, MPI_Comm on = MPI_COMM_NULL) {
    return comm_.irecv_upto(s.data(), static_cast<int>(s.capacity()), source, tag, on);
  }
  // Makes `s`, into which `bytes` arrived, the stream that was sent.
  void received(Stream<V>& s, int bytes) {
    if (runs_) in_.unpack(s, static_cast<size_t>(bytes));
  }

 private:
  std::span<const std::byte> wire(const Stream<V>& s, PackedStream<V>& packer) {
    if (runs_) return packer.wire(s);
    return {static_cast<const std::byte*>(s.data()), s.bytes()};
  }

  CountedComm& comm_;
  bool runs_;
  PackedStream<V> out_, in_;
  std::vector<PackedStream<V>> sends_;  // growing moves them, never the data of a send in flight
};

// The fold's first step: a rank folded out hands `data` to the rank above it, which
// receives it into `in` and calls combine() to take it into its own `data`.
template <class V, class Combine>
void fold_in(StreamWire<V>& wire, const Fold& fold, const Stream<V>& data, Stream<V>& in, Combine combine) {
  const int rank = wire.comm().rank();
  if (rank >= 2 * fold.rem) return;
  if (fold.folded_out()) {
    wire.send(data, rank + 1, kTagFoldIn);
  } else {
    wire.recv(in, rank - 1, kTagFoldIn);
    combine();
  }
}

// The fold's last step: a rank folded out receives the result from the rank it handed
// its data to.
template <class V>
void fold_out(StreamWire<V>& wire, const Fold& fold, Stream<V>& result) {
  const int rank = wire.comm().rank();
  if (rank >= 2 * fold.rem) return;
  if (fold.folded_out()) {
    wire.recv(result, rank + 1, kTagFoldOut);
  } else {
    wire.send(result, rank - 1, kTagFoldOut);
  }
}

}  // namespace mpisgd
