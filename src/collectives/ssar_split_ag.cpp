// SSAR_Split_AllGather (thesis section 3.3.3, Figures 3.10-3.11): the Split phase
// (split_reduce.h) leaves each rank the sum of its owned range; a sparse allgather by
// recursive doubling then concatenates the ranges, every stage doubling the contiguous
// block of ranges a rank holds. The allgather sums nothing, so its blocks go dense only
// past the byte bound: an owned sum that the summation switch made dense is compacted
// first, or a sum just past the switch would be gathered at ten times its bytes
// (docs/performance.md#measurements-behind-autos-rules). Cost (Table 3.1):
//   ((P-1) + log2 P) alpha + [2 (P-1)/P k .. P k] beta,
//   E = ((P-1)/P k + (P-1) f(k/P, N/P, P)) beta for uniform indices.
// Non-powers of two fold the extra ranks' blocks in before the allgather and out after.
#include "collectives/collective_util.h"
#include "collectives/cost_model.h"
#include "collectives/sparse_allreduce.h"
#include "collectives/split_reduce.h"
#include "sparse/stream_sum.h"

namespace mpisgd {
namespace {

template <class V>
class SsarSplitAllgather final : public SparseAllreduce<V> {
 public:
  SsarSplitAllgather(CountedComm& comm, uint32_t dim, const CollectiveConfig& config)
      : comm_(comm), wire_(comm, config.packs()), split_(comm.raw(), comm, dim, config.dense_switch, config.packs()),
        fold_(comm.rank(), comm.size()),
        acc_(dim), in_(dim), scratch_(dim) {
  }

  const Stream<V>& allreduce(const Stream<V>& input) override {
    CountedComm::Timed timed(comm_);
    compact(split_.reduce(input), split_.owned(), acc_);
    fold_in(wire_, fold_, acc_, in_, [&] {
      concat_disjoint(in_, acc_, split_.range(comm_.rank() - 1), split_.owned(), scratch_);
      acc_.swap(in_);
    });
    if (!fold_.folded_out()) gather(fold_.new_rank);
    fold_out(wire_, fold_, acc_);
    return acc_;
  }

 private:
  // The index range held by the block of new ranks [first, first + count).
  Range block(int first, int count) const {
    return {split_.range(fold_.first_part(first)).begin, split_.range(fold_.last_part(first + count - 1)).end};
  }

  void gather(int me) {
    for (int mask = 1; mask < fold_.p2; mask <<= 1) {
      const int partner = me ^ mask;
      const Range mine = block(me & ~(mask - 1), mask);
      const Range theirs = block(partner & ~(mask - 1), mask);
      wire_.exchange(acc_, in_, fold_.old_rank(partner), kTagStage);
      if (partner < me) {
        concat_disjoint(in_, acc_, theirs, mine, scratch_);
        acc_.swap(in_);
      } else {
        concat_disjoint(acc_, in_, mine, theirs, scratch_);
      }
    }
  }

  CountedComm& comm_;
  StreamWire<V> wire_;
  SplitReduce<V> split_;
  Fold fold_;
  Stream<V> acc_, in_, scratch_;
};

}  // namespace

double ssar_split_ag_cost(const CostModel& m) {
  const Fold fold(0, m.in().ranks);
  const double total = m.sum_of(m.p());
  const double owned = total / m.p(), length = m.n() / m.p();
  double t = m.split(m.in().ranks) + m.compact(owned, length);
  if (fold.rem) t += m.share(fold.rem) * m.gather_message(owned, length);
  for (int held = 1; held < fold.p2; held *= 2) {
    const double share = held / static_cast<double>(fold.p2);  // of [0, N) a block covers
    t += m.share(fold.p2) * m.gather_message(total * share, m.n() * share);
  }
  return t + (fold.rem ? m.share(fold.rem) * m.gather_message(total, m.n()) : 0);
}

template <class V>
std::unique_ptr<SparseAllreduce<V>> make_ssar_split_ag(CountedComm& comm, uint32_t dim, const CollectiveConfig& c) {
  check_message_size<V>(dim, "ssar-split-ag");  // before any buffer is made
  return std::make_unique<SsarSplitAllgather<V>>(comm, dim, c);
}
template std::unique_ptr<SparseAllreduce<float>> make_ssar_split_ag(CountedComm&, uint32_t, const CollectiveConfig&);
template std::unique_ptr<SparseAllreduce<double>> make_ssar_split_ag(CountedComm&, uint32_t, const CollectiveConfig&);

}  // namespace mpisgd
