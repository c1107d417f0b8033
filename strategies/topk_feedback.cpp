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

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "cli/flag_values.h"
#include "collectives/sparse_allreduce.h"
#include "collectives/topk_allreduce.h"
#include "sparse/error_feedback.h"
#include "sparse/stream_sum.h"
#include "strategies/feedback_on_device.h"
#include "strategies/strategy.h"

namespace mpisgd {
namespace {

class TopkFeedback final : public SummingStrategy {
 public:
  TopkFeedback(const StrategyContext& c, const std::string& algorithm, const SparsifyOptions& sparsify)
      : dim_(c.dim), sparsify_(sparsify), feedback_(std::make_unique<ErrorFeedback>(sparsify, c.dim)),
        allreduce_(make_topk_allreduce<float>(algorithm, c.comm, c.dim, c.flags.get<TopkCollectiveConfig>())),
        dropped_(c.dim) {
    spdlog::info("{}: k = {} of N = {} per rank, selection {}, warm-up {} steps", algorithm, feedback_->k(), c.dim,
                 sparsify.select.empty() ? "threshold-reuse" : sparsify.select, sparsify.warmup_steps);
    if (sparsify.warmup_steps > 0)
      warmup_ = make_sparse_allreduce<float>("ssar-split-ag", c.comm, c.dim, c.flags.get<CollectiveConfig>());
  }

  const Stream<float>& combine(const Stream<float>& local) override {
    if (feedback_->warming_up()) {
      const Stream<float>& all = feedback_->select(local.pairs());
      return warmup_->allreduce(switched(all, {0, dim_}, DenseSwitch{}, dense_));
    }
    const Stream<float>& sum = allreduce_->allreduce(feedback_->select(local.pairs()), feedback_->k(), dropped_);
    feedback_->take_back(dropped_);
    return sum;
  }
  bool select_on(BatchDevice& device) override { return move_feedback_to(device, sparsify_, dim_, feedback_); }
  const SparseVector* residual() const override { return &feedback_->residual(); }
  void save_state(StateWriter& out) const override {
    feedback_->save_state(out);
    allreduce_->save_state(out);
  }
  void load_state(StateReader& in) override {
    feedback_->load_state(in);
    allreduce_->load_state(in);
  }

 private:
  uint32_t dim_;
  SparsifyOptions sparsify_;
  std::unique_ptr<Feedback> feedback_;
  std::unique_ptr<TopkAllreduce<float>> allreduce_;
  std::unique_ptr<SparseAllreduce<float>> warmup_;
  Stream<float> dense_;  // the warm-up's update, when it is past the dense switch
  Stream<float> dropped_;
};

std::vector<std::string> selection_names() {
  const auto names = topk_selector_names();
  return {names.begin(), names.end()};
}

// How a rank sparsifies (SparsifyOptions, which the lossless sparse strategies also take)
// and the top-k collectives' periods (TopkCollectiveConfig).
class TopkFamily final : public StrategyFamily {
 public:
  void declare_flags(CLI::App& t, StrategyFlags& flags) const override {
    auto& sparsify = flags.get<SparsifyOptions>();
    auto& topk = flags.get<TopkCollectiveConfig>();
    t.add_option("--density", sparsify.density,
                 "top-k: each rank sends k = ceil(D x N) values of its update, keeping the rest as a residual "
                 "(default for top-k strategies 0.01; sparse strategies stay lossless without it)")
        ->transform(cli::number_from_to(0, 1));
    t.add_option("--k", sparsify.k, "top-k: values each rank sends per step (instead of --density)")
        ->transform(cli::positive_whole<uint64_t>());
    t.add_option("--select", sparsify.select,
                 "top-k selection: exact | approx | threshold-reuse | gaussian | sampled (default threshold-reuse)")
        ->transform(cli::one_of(selection_names()));
    t.add_option("--reuse-period", sparsify.reuse_period,
                 "threshold-reuse and Ok-Topk: steps between exact thresholds, reused in between")
        ->transform(cli::positive_whole<uint32_t>())
        ->each([&](const std::string&) { topk.reuse_period = sparsify.reuse_period; })
        ->capture_default_str();
    t.add_option("--repartition-period", topk.repartition_period,
                 "oktopk: steps between recomputing the regions that balance the ranks' top-k")
        ->transform(cli::positive_whole<uint32_t>())
        ->capture_default_str();
    t.add_option("--warmup-steps", sparsify.warmup_steps, "top-k: steps that send the whole update before sparsifying")
        ->transform(cli::non_negative_whole<uint64_t>())
        ->capture_default_str();
  }
  void check(const std::string& strategy, bool /*own*/, const StrategyFlags& flags, int /*ranks*/) const override {
    const auto& sparsify = flags.get<SparsifyOptions>();
    if (sparsify.density > 0 && sparsify.k > 0) throw std::invalid_argument("give --density or --k, not both");
    if (sparsify.density < 0 || sparsify.density > 1) throw std::invalid_argument("--density must be in (0, 1]");
    // Gaussiank (Shi et al. 2019, as Table 1 of the Ok-Topk paper lists it) is TopkA's
    // exchange with the threshold of a fitted normal distribution.
    if (strategy == "gaussiank" && !sparsify.select.empty() && sparsify.select != "gaussian")
      throw std::invalid_argument("--strategy gaussiank selects by its gaussian threshold; drop --select " +
                                  sparsify.select + " or use --strategy topk-ag");
  }
  void identity(const StrategyFlags& flags, std::vector<std::pair<std::string, std::string>>& lines) const override {
    const auto& s = flags.get<SparsifyOptions>();
    lines.emplace_back("density", fmt::format("{}", s.density));
    lines.emplace_back("k", fmt::format("{}", s.k));
    lines.emplace_back("select", s.select);
    lines.emplace_back("reuse-period", fmt::format("{}", s.reuse_period));
    lines.emplace_back("warmup-steps", fmt::format("{}", s.warmup_steps));
  }
};

SparsifyOptions sparsify_options(const StrategyContext& c) {
  SparsifyOptions sparsify = c.flags.get<SparsifyOptions>();
  sparsify.seed = c.step.seed;
  sparsify.columns = c.columns;
  return sparsify;
}

}  // namespace

const StrategyFamily& topk_family() {
  static const TopkFamily family;
  return family;
}

std::unique_ptr<Strategy> make_topk_feedback(const StrategyContext& c, const std::string& algorithm) {
  return std::make_unique<TopkFeedback>(c, algorithm, sparsify_options(c));
}

std::unique_ptr<Strategy> make_gaussiank(const StrategyContext& c) {
  SparsifyOptions gaussian = sparsify_options(c);
  gaussian.select = "gaussian";
  return std::make_unique<TopkFeedback>(c, "topk-ag", gaussian);
}

}  // namespace mpisgd
