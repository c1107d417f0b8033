// The baseline every sparse algorithm is measured against (thesis Table 3.1, "Dense
// AllReduce"): the input made dense and summed by MPI_Allreduce.
// Cost: 2 log2(P) alpha + 2 (P-1)/P N beta, whatever the density.
#include "collectives/collective_util.h"
#include "collectives/cost_model.h"
#include "collectives/sparse_allreduce.h"
#include "sparse/stream_sum.h"

namespace mpisgd {
namespace {

template <class V>
class DenseAllreduce final : public SparseAllreduce<V> {
 public:
  DenseAllreduce(CountedComm& comm, uint32_t dim, const CollectiveConfig&) : comm_(comm), dim_(dim), result_(dim) {}

  const Stream<V>& allreduce(const Stream<V>& input) override {
    CountedComm::Timed timed(comm_);
    densify(input, {0, dim_}, result_);
    comm_.allreduce_sum(result_.values().data(), result_.count());
    return result_;
  }

 private:
  CountedComm& comm_;
  uint32_t dim_;
  Stream<V> result_;
};

}  // namespace

double dense_allreduce_cost(const CostModel& m) {
  return m.dense_reduce_scatter(m.n(), m.in().ranks) + m.dense_allgather();
}

template <class V>
std::unique_ptr<SparseAllreduce<V>> make_dense_allreduce(CountedComm& comm, uint32_t dim, const CollectiveConfig& c) {
  return std::make_unique<DenseAllreduce<V>>(comm, dim, c);
}
template std::unique_ptr<SparseAllreduce<float>> make_dense_allreduce(CountedComm&, uint32_t, const CollectiveConfig&);
template std::unique_ptr<SparseAllreduce<double>> make_dense_allreduce(CountedComm&, uint32_t, const CollectiveConfig&);

}  // namespace mpisgd
