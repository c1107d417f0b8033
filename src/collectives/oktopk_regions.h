#pragma once
// Ok-Topk's split and reduce (Li & Hoefler PPoPP'22, section 3.1.1, Figures 1(c) and 2(b)):
// [0, N) is cut into P regions, region j = [bound_j, bound_{j+1}), bound_0 = 0, bound_P = N,
// and rank j sums every rank's pairs in region j. An equal split would leave one rank all
// the work when the local top-k indices cluster (up to 2(P-1)k elements received), so the
// bounds follow the indices: on repartition() each rank cuts its selected indices into P
// runs of equal count, and an allreduce of the P-1 cut points averages them over the ranks
// that selected anything (an equal split when none did). Balanced, each rank receives about
// 2k/P elements from each other rank:
//   split and reduce: (P-1) alpha + 2k (P-1)/P beta                       (equation 1)
//   repartition:      (log P) alpha + (P-1) words, every tau calls         (amortized)
// Pairs leave with destinations rotated (rank r sends to r+1 first) so that no rank is
// everybody's first target, all in flight at once, and are summed in source-rank order,
// whatever order they arrive in, so that results do not depend on timing.
#include <cstdint>
#include <vector>

#include <mpi.h>

#include "collectives/collective_util.h"
#include "comm/counted_comm.h"
#include "sparse/stream.h"

namespace mpisgd {

// Calls f(index, value) on the entries of `s`, a stream over `range`, indices ascending:
// every pair of a sparse stream, the non-zero values of a dense one.
template <class V, class F>
void for_each_entry(const Stream<V>& s, Range range, F f) {
  if (!s.is_dense()) {
    for (const Pair<V>& p : s.pairs()) f(p.index, p.value);
    return;
  }
  const auto values = s.values();
  for (uint32_t i = 0; i < values.size(); ++i)
    if (values[i] != V{0}) f(range.begin + i, values[i]);
}

template <class V>
class RegionReduce {
 public:
  // With `columns` K >= 2 (a K-class model's weights a feature, `dim` a multiple of K)
  // regions start at multiples of K, so that no feature straddles two; with `runs` the
  // parts cross packed into runs (StreamWire).
  RegionReduce(CountedComm& comm, uint32_t dim, uint32_t columns = 1, bool runs = false);

  // Collective: new bounds from every rank's `selected` (a stream over [0, N)).
  void repartition(const Stream<V>& selected);

  // Collective: the sum over all ranks of their `selected` pairs in this rank's region,
  // a stream over owned(), valid until the next call.
  const Stream<V>& reduce(const Stream<V>& selected);

  Range region(int j) const { return {bound_[j], bound_[j + 1]}; }
  // The P + 1 bounds the last repartition chose (a checkpoint's state); set_bounds throws
  // std::runtime_error for bounds that do not tile [0, N) in P regions starting at
  // multiples of K.
  const std::vector<uint32_t>& bounds() const { return bound_; }
  void set_bounds(const std::vector<uint32_t>& bounds);
  Range owned() const { return region(comm_.rank()); }

 private:
  void reserve_owned();
  uint32_t aligned(uint64_t index) const { return static_cast<uint32_t>(index - index % columns_); }

  CountedComm& comm_;
  uint32_t columns_;
  StreamWire<V> wire_;
  Range whole_;
  std::vector<uint32_t> bound_;   // P + 1
  std::vector<uint64_t> votes_;   // the sums of the ranks' P-1 cut points, then how many voted
  std::vector<Stream<V>> send_;   // index d: the part for rank + d
  std::vector<Stream<V>> part_;   // index s: rank s's part of this rank's region
  Stream<V> acc_, scratch_;
  std::vector<MPI_Request> send_req_, recv_req_;  // recv_req_[s]: from rank s
};

}  // namespace mpisgd
