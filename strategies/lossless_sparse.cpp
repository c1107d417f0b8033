// Lossless sparse allreduce (thesis section 4.2.2, "sparse AllReduce" aggregation): each
// rank sends its natural sparse mini-batch update, as a stream, through one of the
// collectives of src/collectives/, and applies the exact sum. Which collective is the
// only difference between the strategies built here.
// With --density or --k, a rank first keeps only its top k (error feedback,
// sparse/error_feedback.h) and the collective sums exactly what was selected: the
// thesis' TopK SGD over SSAR (section 2.4).
#include <optional>

#include <spdlog/spdlog.h>

#include "collectives/sparse_allreduce.h"
#include "sparse/error_feedback.h"
#include "sparse/stream_sum.h"
#include "strategies/apply_sum.h"
#include "strategies/strategy.h"

namespace mpisgd {
namespace {

class LosslessSparse final : public Strategy {
 public:
  LosslessSparse(const StrategyContext& c, const std::string& algorithm)
      : comm_(c.comm), algorithm_(algorithm), dim_(c.dim), one_rank_(c.comm.size() == 1 && !c.sparsify.requested()),
        config_(tuned(c.collective, c.comm, sizeof(float))),
        allreduce_(make_sparse_allreduce<float>(algorithm, c.comm, c.dim, config_)), input_(c.dim) {
    if (!c.sparsify.requested()) return;
    feedback_.emplace(c.sparsify, c.dim);
    spdlog::info("{} on the top k = {} of N = {} per rank, selection {}", algorithm, feedback_->k(), c.dim,
                 c.sparsify.select.empty() ? "threshold-reuse" : c.sparsify.select);
  }

  uint64_t exchange(const SparseVector& local, double eta, Weights& w) override {
    const SparseVector& sent = feedback_ ? feedback_->select(local) : local;
    encode<float>(sent.index, sent.value, {0, dim_}, config_.dense_switch, input_);
    return step_.apply(allreduce_->allreduce(input_), eta, w);
  }
  bool passes_through() const override { return one_rank_; }
  const SparseVector* residual() const override { return feedback_ ? &feedback_->residual() : nullptr; }

  // The dense switch may have been tuned from this run's timings: a resumed run takes the
  // saved one, or its collectives would choose dense and sparse differently.
  void save_state(StateWriter& out) const override {
    out.put(config_.dense_switch.density);
    if (feedback_) feedback_->save_state(out);
  }
  void load_state(StateReader& in) override {
    config_.dense_switch.density = in.get<double>();
    allreduce_ = make_sparse_allreduce<float>(algorithm_, comm_, dim_, config_);
    if (feedback_) feedback_->load_state(in);
  }

 private:
  CountedComm& comm_;
  std::string algorithm_;
  uint32_t dim_;
  bool one_rank_;
  CollectiveConfig config_;
  std::unique_ptr<SparseAllreduce<float>> allreduce_;
  std::optional<ErrorFeedback> feedback_;
  Stream<float> input_;
  SumStep step_;
};

}  // namespace

std::unique_ptr<Strategy> make_lossless_sparse(const StrategyContext& context, const std::string& algorithm) {
  return std::make_unique<LosslessSparse>(context, algorithm);
}

}  // namespace mpisgd
