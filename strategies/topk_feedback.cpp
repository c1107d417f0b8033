// Top-k sparsified SGD with error feedback (thesis section 2.4; Ok-Topk Algorithm 1; gTop-k
// Algorithm 4): each rank merges its natural sparse update into its residual, keeps about
// k values by magnitude (--select), and a top-k collective of src/collectives/ combines
// them. Whatever the collective leaves out of the global update (gTop-k's merges, Ok-Topk's
// global selection) comes back into the residual, so the applied updates plus the
// residuals always equal the raw updates. The first --warmup-steps steps send the whole
// update through the lossless split-allgather (SparCML), as Ok-Topk's code warms up dense.
#include <memory>
#include <stdexcept>
#include <string>

#include <spdlog/spdlog.h>

#include "collectives/sparse_allreduce.h"
#include "collectives/topk_allreduce.h"
#include "sparse/error_feedback.h"
#include "sparse/stream_sum.h"
#include "strategies/apply_sum.h"
#include "strategies/strategy.h"

namespace mpisgd {
namespace {

class TopkFeedback final : public Strategy {
 public:
  TopkFeedback(const StrategyContext& c, const std::string& algorithm, const SparsifyOptions& sparsify)
      : dim_(c.dim), feedback_(sparsify, c.dim),
        allreduce_(make_topk_allreduce<float>(algorithm, c.comm, c.dim, c.topk)), dropped_(c.dim) {
    spdlog::info("{}: k = {} of N = {} per rank, selection {}, warm-up {} steps", algorithm, feedback_.k(), c.dim,
                 sparsify.select.empty() ? "threshold-reuse" : sparsify.select, sparsify.warmup_steps);
    if (sparsify.warmup_steps > 0)
      warmup_ = make_sparse_allreduce<float>("ssar-split-ag", c.comm, c.dim, c.collective);
  }

  uint64_t exchange(const SparseVector& local, double eta, Weights& w) override {
    if (feedback_.warming_up()) {
      const SparseVector& all = feedback_.select(local);
      encode<float>(all.index, all.value, {0, dim_}, DenseSwitch{}, selected_);
      return step_.apply(warmup_->allreduce(selected_), eta, w);
    }
    write_pairs(feedback_.select(local), dim_, selected_);
    const Stream<float>& sum = allreduce_->allreduce(selected_, feedback_.k(), dropped_);
    feedback_.take_back(dropped_);
    return step_.apply(sum, eta, w);
  }
  const SparseVector* residual() const override { return &feedback_.residual(); }
  void save_state(StateWriter& out) const override {
    feedback_.save_state(out);
    allreduce_->save_state(out);
  }
  void load_state(StateReader& in) override {
    feedback_.load_state(in);
    allreduce_->load_state(in);
  }

 private:
  uint32_t dim_;
  ErrorFeedback feedback_;
  std::unique_ptr<TopkAllreduce<float>> allreduce_;
  std::unique_ptr<SparseAllreduce<float>> warmup_;
  Stream<float> selected_, dropped_;
  SumStep step_;
};

}  // namespace

std::unique_ptr<Strategy> make_topk_feedback(const StrategyContext& c, const std::string& algorithm) {
  return std::make_unique<TopkFeedback>(c, algorithm, c.sparsify);
}

// Gaussiank (Shi et al. 2019, as Table 1 of the Ok-Topk paper lists it): TopkA's exchange
// with the threshold of a fitted normal distribution.
std::unique_ptr<Strategy> make_gaussiank(const StrategyContext& c) {
  if (!c.sparsify.select.empty() && c.sparsify.select != "gaussian")
    throw std::invalid_argument("--strategy gaussiank selects by its gaussian threshold; drop --select " +
                                c.sparsify.select + " or use --strategy topk-ag");
  SparsifyOptions gaussian = c.sparsify;
  gaussian.select = "gaussian";
  return std::make_unique<TopkFeedback>(c, "topk-ag", gaussian);
}

}  // namespace mpisgd
