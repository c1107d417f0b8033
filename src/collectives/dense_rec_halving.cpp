// Dense allreduce in the canonical summation order: Rabenseifner's algorithm (Thakur,
// Rabenseifner and Gropp, "Optimization of collective communication operations in
// MPICH", IJHPCA 2005, section 4.4), a reduce-scatter by recursive halving and an
// allgather by recursive doubling, with the distances taken from 1 upwards rather than
// from P/2 down. That order makes every value the sum of canonical_sum_order()'s tree,
// as in SSAR_Rec_Dbl and the Split phase, so `auto` can choose between dense and sparse
// summation without changing a bit of the result; MPI_Allreduce ("dense") promises no
// order, and its bits vary with the algorithm the library picks.
//   Stage t of log2 P: exchange half of the range still held with the rank at distance
//   2^(t-1), add the half kept; then the same messages in reverse, without the sums.
// Cost: 2 log2(P) alpha + 2 (P-1)/P N beta + (P-1)/P N gamma, whatever the density;
// non-powers of two fold the extra ranks in before and out after (two messages of N).
#include <vector>

#include "collectives/collective_util.h"
#include "collectives/cost_model.h"
#include "collectives/sparse_allreduce.h"
#include "sparse/stream_sum.h"

namespace mpisgd {
namespace {

// The ranges a rank holds after each halving stage: held[0] = [0, N), held[t] the half
// of held[t-1] it keeps at stage t (the lower half where bit t-1 of its rank is 0).
std::vector<Range> held_ranges(uint32_t dim, const Fold& fold) {
  std::vector<Range> held{{0, dim}};
  if (fold.folded_out()) return held;
  for (int mask = 1; mask < fold.p2; mask <<= 1) {
    const Range r = held.back();
    const uint32_t mid = r.begin + r.length() / 2;
    held.push_back(fold.new_rank & mask ? Range{mid, r.end} : Range{r.begin, mid});
  }
  return held;
}

template <class V>
class DenseRecHalving final : public SparseAllreduce<V> {
 public:
  DenseRecHalving(CountedComm& comm, uint32_t dim, const CollectiveConfig&)
      : comm_(comm), wire_(comm, false), dim_(dim), fold_(comm.rank(), comm.size()), held_(held_ranges(dim, fold_)),
        result_(dim), received_(dim) {}

  const Stream<V>& allreduce(const Stream<V>& input) override {
    CountedComm::Timed timed(comm_);
    densify(input, {0, dim_}, result_);
    V* sum = result_.values().data();
    fold_in(wire_, fold_, result_, received_, [&] { add({0, dim_}); });
    if (!fold_.folded_out()) {
      // Reduce-scatter: the half given away at stage t is the sibling of held[t].
      received_.set_dense(dim_);
      V* in = received_.values().data();
      for (size_t t = 1; t < held_.size(); ++t) {
        const Range keep = held_[t], give = sibling(t);
        comm_.sendrecv(sum + give.begin, static_cast<int>(give.length()), in + keep.begin,
                       static_cast<int>(keep.length()), mpi_type<V>(), partner(t), kTagStage);
        add(keep);
      }
      // Allgather: the same pairs in reverse, each rank sending the sum it completed.
      for (size_t t = held_.size() - 1; t >= 1; --t) {
        const Range mine = held_[t], theirs = sibling(t);
        comm_.sendrecv(sum + mine.begin, static_cast<int>(mine.length()), sum + theirs.begin,
                       static_cast<int>(theirs.length()), mpi_type<V>(), partner(t), kTagStage);
      }
    }
    fold_out(wire_, fold_, result_);
    return result_;
  }

 private:
  // The rank this one pairs with at stage t, in the communicator's numbering.
  int partner(size_t t) const { return fold_.old_rank(fold_.new_rank ^ (1 << (t - 1))); }

  // The other half of held[t - 1].
  Range sibling(size_t t) const {
    const Range parent = held_[t - 1], kept = held_[t];
    return kept.begin == parent.begin ? Range{kept.end, parent.end} : Range{parent.begin, kept.begin};
  }

  // The partner's partial sum, received dense, into this rank's, over `r`.
  void add(Range r) {
    V* sum = result_.values().data();
    const V* in = received_.values().data();
    for (uint32_t i = r.begin; i < r.end; ++i) sum[i] += in[i];
  }

  CountedComm& comm_;
  StreamWire<V> wire_;  // dense streams: nothing to pack
  uint32_t dim_;
  Fold fold_;
  std::vector<Range> held_;
  Stream<V> result_, received_;
};

}  // namespace

double dense_rec_halving_cost(const CostModel& m) {
  const Fold fold(0, m.in().ranks);
  const double alpha = m.in().network.alpha, add = m.in().compute.dense_element_s;
  double t = fold.rem ? m.share(fold.rem) * (2 * m.message(m.n(), m.n()) + m.n() * add) : 0;
  double length = m.n();
  for (int stage = 1; stage < fold.p2; stage *= 2) {
    length /= 2;
    t += m.share(fold.p2) * (2 * (alpha + m.dense(length)) + length * add);
  }
  return t;
}

template <class V>
std::unique_ptr<SparseAllreduce<V>> make_dense_rec_halving(CountedComm& comm, uint32_t dim,
                                                           const CollectiveConfig& c) {
  check_message_size<V>(dim, "dense-rec-halving");  // before any buffer is made
  return std::make_unique<DenseRecHalving<V>>(comm, dim, c);
}
template std::unique_ptr<SparseAllreduce<float>> make_dense_rec_halving(CountedComm&, uint32_t,
                                                                        const CollectiveConfig&);
template std::unique_ptr<SparseAllreduce<double>> make_dense_rec_halving(CountedComm&, uint32_t,
                                                                         const CollectiveConfig&);

}  // namespace mpisgd
