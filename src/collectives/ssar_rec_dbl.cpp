// SSAR_Rec_Dbl (thesis section 3.3.3, Figure 3.9): recursive doubling where each of the
// log2(P) stages exchanges the whole partial sum with the partner at distance 2^(t-1)
// and adds the two sparsely. Cost (Table 3.1):
//   log2(P) alpha + [log2(P) k .. (P-1) k] beta,   E = sum_{i=1..log2 P} f(k, N, 2^(i-1)) beta
// for uniform indices. The best choice when latency dominates: few ranks, very sparse.
// Non-powers of two fold the extra ranks in before and out after (two more messages).
#include <algorithm>

#include "collectives/collective_util.h"
#include "collectives/cost_model.h"
#include "collectives/sparse_allreduce.h"
#include "sparse/stream_sum.h"

namespace mpisgd {
namespace {

template <class V>
class SsarRecDbl final : public SparseAllreduce<V> {
 public:
  SsarRecDbl(CountedComm& comm, uint32_t dim, const CollectiveConfig& config)
      : comm_(comm), wire_(comm, config.packs()), whole_{0, dim}, sw_(config.dense_switch),
        fold_(comm.rank(), comm.size()), acc_(dim),
        in_(dim), scratch_(dim) {
  }

  const Stream<V>& allreduce(const Stream<V>& input) override {
    CountedComm::Timed timed(comm_);
    acc_.copy_from(input);
    fold_in(wire_, fold_, acc_, in_, [&] { add_overlapping(acc_, in_, scratch_, whole_, sw_); });
    if (!fold_.folded_out()) {
      for (int mask = 1; mask < fold_.p2; mask <<= 1) {
        wire_.exchange(acc_, in_, fold_.old_rank(fold_.new_rank ^ mask), kTagStage);
        add_overlapping(acc_, in_, scratch_, whole_, sw_);
      }
    }
    fold_out(wire_, fold_, acc_);
    return acc_;
  }

 private:
  CountedComm& comm_;
  StreamWire<V> wire_;
  Range whole_;
  DenseSwitch sw_;
  Fold fold_;
  Stream<V> acc_, in_, scratch_;
};

}  // namespace

double ssar_rec_dbl_cost(const CostModel& m) {
  const Fold fold(0, m.in().ranks);
  const double held_after_fold = m.p() / fold.p2;  // inputs a rank holds after the fold
  double t = fold.rem ? m.share(fold.rem) * (m.message(m.in().k, m.n()) + m.sum(m.in().k, m.n())) : 0;
  for (int stage = 1; stage < fold.p2; stage *= 2) {
    const double items = m.sum_of(held_after_fold * stage);
    // Ranks that share a core merge in turn, all at the same stage; a slow link hides
    // the others' merges behind the transfer.
    const double sum = m.sum(items, m.n());
    const double waiting = std::max(0.0, (m.in().core_sharing - 1) * sum - m.transfer(items, m.n()));
    t += m.share(fold.p2) * (m.message(items, m.n()) + sum + waiting);
  }
  return t + (fold.rem ? m.share(fold.rem) * m.message(m.sum_of(m.p()), m.n()) : 0);
}

template <class V>
std::unique_ptr<SparseAllreduce<V>> make_ssar_rec_dbl(CountedComm& comm, uint32_t dim, const CollectiveConfig& c) {
  check_message_size<V>(dim, "ssar-rec-dbl");  // before any buffer is made
  return std::make_unique<SsarRecDbl<V>>(comm, dim, c);
}
template std::unique_ptr<SparseAllreduce<float>> make_ssar_rec_dbl(CountedComm&, uint32_t, const CollectiveConfig&);
template std::unique_ptr<SparseAllreduce<double>> make_ssar_rec_dbl(CountedComm&, uint32_t, const CollectiveConfig&);

}  // namespace mpisgd
