// Lossless sparse allreduce (thesis section 4.2.2, "sparse AllReduce" aggregation): each
// rank sends its natural sparse mini-batch update, as a stream, through one of the
// collectives of src/collectives/, and applies the exact sum. Which collective is the
// only difference between the strategies built here.
#include <spdlog/spdlog.h>

#include "collectives/sparse_allreduce.h"
#include "sparse/stream_sum.h"
#include "strategies/strategy.h"

namespace mpisgd {
namespace {

class LosslessSparse final : public Strategy {
 public:
  LosslessSparse(const StrategyContext& c, const std::string& algorithm)
      : dim_(c.dim), one_rank_(c.comm.size() == 1), config_(tuned(c.collective, c.comm, sizeof(float))),
        allreduce_(make_sparse_allreduce<float>(algorithm, c.comm, c.dim, config_)), input_(c.dim) {}

  uint64_t exchange(const SparseVector& local, double eta, Weights& w) override {
    encode<float>(local.index, local.value, {0, dim_}, config_.dense_switch, input_);
    const Stream<float>& sum = allreduce_->allreduce(input_);
    if (sum.is_dense()) return w.step_dense(eta, sum.values());
    index_.resize(sum.count());
    value_.resize(sum.count());
    for (size_t j = 0; j < sum.count(); ++j) {
      index_[j] = sum.pairs()[j].index;
      value_[j] = sum.pairs()[j].value;
    }
    w.step_sparse(eta, index_, value_);
    return sum.count();
  }
  bool passes_through() const override { return one_rank_; }

 private:
  uint32_t dim_;
  bool one_rank_;
  CollectiveConfig config_;
  std::unique_ptr<SparseAllreduce<float>> allreduce_;
  Stream<float> input_;
  std::vector<uint32_t> index_;  // the sum's pairs, as Weights takes them
  std::vector<float> value_;
};

}  // namespace

std::unique_ptr<Strategy> make_lossless_sparse(const StrategyContext& context, const std::string& algorithm) {
  return std::make_unique<LosslessSparse>(context, algorithm);
}

}  // namespace mpisgd
