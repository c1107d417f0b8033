// DSAR_Split_AllGather (thesis section 3.3.4): the sparse Split phase as in
// SSAR_Split_AllGather, then each owned range is made dense and a dense MPI_Allgatherv
// (ring or recursive doubling, as the MPI library chooses) builds the dense result. For
// results past the dense switch, where a sparse allgather would send more. Cost (Table 3.1):
//   ((P-1) + log2 P) alpha + [(P-1)/P N .. k + (P-1)/P N] beta,  E = (P-1)/P (k + N) beta.
#include "collectives/collective_util.h"
#include "collectives/cost_model.h"
#include "collectives/dense_allgather.h"
#include "collectives/sparse_allreduce.h"
#include "collectives/split_reduce.h"
#include "sparse/stream_sum.h"

namespace mpisgd {
namespace {

std::vector<Range> all_ranges(uint32_t dim, int parts) {
  std::vector<Range> ranges;
  for (int r = 0; r < parts; ++r) ranges.push_back(owned_range(dim, parts, r));
  return ranges;
}

template <class V>
class DsarSplitAllgather final : public SparseAllreduce<V> {
 public:
  DsarSplitAllgather(CountedComm& comm, uint32_t dim, const CollectiveConfig& config)
      : comm_(comm), dim_(dim), split_(comm.raw(), comm, dim, config.dense_switch, config.packs()),
        gather_(comm, all_ranges(dim, comm.size())), result_(dim) {
  }

  const Stream<V>& allreduce(const Stream<V>& input) override {
    CountedComm::Timed timed(comm_);
    const Stream<V>& part = split_.reduce(input);
    result_.set_dense(dim_);
    const Range own = split_.owned();
    write_dense(part, own, result_.values().data() + own.begin);
    gather_.run(result_.values().data());
    return result_;
  }

 private:
  CountedComm& comm_;
  uint32_t dim_;
  SplitReduce<V> split_;
  DenseAllgather<V> gather_;
  Stream<V> result_;
};

}  // namespace

double dsar_split_ag_cost(const CostModel& m) { return m.split(m.in().ranks) + m.dense_allgather(); }

template <class V>
std::unique_ptr<SparseAllreduce<V>> make_dsar_split_ag(CountedComm& comm, uint32_t dim, const CollectiveConfig& c) {
  check_message_size<V>(dim, "dsar-split-ag");  // before any buffer is made
  return std::make_unique<DsarSplitAllgather<V>>(comm, dim, c);
}
template std::unique_ptr<SparseAllreduce<float>> make_dsar_split_ag(CountedComm&, uint32_t, const CollectiveConfig&);
template std::unique_ptr<SparseAllreduce<double>> make_dsar_split_ag(CountedComm&, uint32_t, const CollectiveConfig&);

}  // namespace mpisgd
