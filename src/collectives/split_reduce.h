#pragma once
// The Split phase shared by SSAR_Split_AllGather, DSAR_Split_AllGather and early-switching
// DSAR (thesis sections 3.3.3 and 4.1.4, Figure 3.11): [0, N) is cut into P owned ranges;
// each rank sends the part of its vector in range j straight to rank j with non-blocking
// MPI, destinations rotated (rank r sends to r+1 first) so that no rank is flooded
// first, and sums the parts it receives while the others are still in flight, in the
// fixed tree order of canonical_sum_order(), so that its sums equal SSAR_Rec_Dbl's bit
// for bit whatever order the messages come in.
// Cost: (P-1) alpha + [0 .. k] beta per rank, E = (P-1)/P k beta for uniform indices.
#include <utility>
#include <vector>

#include <mpi.h>

#include "collectives/collective_util.h"
#include "comm/counted_comm.h"
#include "sparse/stream.h"

namespace mpisgd {

template <class V>
class SplitReduce {
 public:
  // Collective over `comm` (any subset of the ranks `counter` counts for).
  // With `runs` the parts cross packed into runs (StreamWire).
  SplitReduce(MPI_Comm comm, CountedComm& counter, uint32_t dim, const DenseSwitch& sw, bool runs = false);

  // Collective: returns the sum over `comm` of every rank's part of `input` (a stream
  // over [0, N)) in this rank's owned range, as a stream over that range.
  const Stream<V>& reduce(const Stream<V>& input);

  Range range(int part) const;
  Range owned() const { return range(rank_); }

 private:
  MPI_Comm comm_;
  CountedComm& counter_;
  StreamWire<V> wire_;
  int rank_ = 0, size_ = 1;
  Range whole_;
  DenseSwitch sw_;
  Stream<V> acc_, scratch_;
  std::vector<Stream<V>> send_, recv_;  // index d: the stream to rank + d, from rank - d
  std::vector<MPI_Request> send_req_, recv_req_;
  std::vector<char> arrived_;
  std::vector<Stream<V>*> part_;           // where rank s's part, then partial sum, is
  std::vector<std::pair<int, int>> tree_;  // canonical_sum_order(P): (into, from)
  std::vector<char> taken_;                // per sum of tree_, this call
  std::vector<int> pending_;               // sums still to take into rank s's part

  size_t add_ready(size_t done);
  bool next_sum_into(int into, size_t i) const;
};

}  // namespace mpisgd
