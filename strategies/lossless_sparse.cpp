// Lossless sparse allreduce (thesis section 4.2.2, "sparse AllReduce" aggregation): each
// rank sends its natural sparse mini-batch update, as a stream, through one of the
// collectives of src/collectives/, and applies the exact sum. Which collective is the
// only difference between the strategies built here.
// With --density or --k, a rank first keeps only its top k (error feedback,
// sparse/error_feedback.h) and the collective sums exactly what was selected: the
// thesis' TopK SGD over SSAR (section 2.4).
#include <optional>

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "cli/flag_values.h"
#include "collectives/sparse_allreduce.h"
#include "sparse/error_feedback.h"
#include "sparse/stream_sum.h"
#include "strategies/feedback_on_device.h"
#include "strategies/strategy.h"

namespace mpisgd {
namespace {

class LosslessSparse final : public SummingStrategy {
 public:
  LosslessSparse(const StrategyContext& c, const std::string& algorithm, const SparsifyOptions& sparsify)
      : comm_(c.comm), algorithm_(algorithm), dim_(c.dim), one_rank_(c.comm.size() == 1 && !sparsify.requested()),
        // One rank's update goes straight to the step (passes_through), so no collective
        // is built and the machine is not measured for one: 20 ms of a P = 1 start-up.
        config_(one_rank_ ? c.flags.get<CollectiveConfig>()
                          : tuned(c.flags.get<CollectiveConfig>(), c.comm, sizeof(float))),
        allreduce_(one_rank_ ? nullptr : make_sparse_allreduce<float>(algorithm, c.comm, c.dim, config_)) {
    if (!sparsify.requested()) return;
    sparsify_ = sparsify;
    feedback_ = std::make_unique<ErrorFeedback>(sparsify, c.dim);
    spdlog::info("{} on the top k = {} of N = {} per rank, selection {}", algorithm, feedback_->k(), c.dim,
                 sparsify.select.empty() ? "threshold-reuse" : sparsify.select);
  }

  const Stream<float>& combine(const Stream<float>& local) override {
    const Stream<float>& sent = feedback_ ? feedback_->select(local.pairs()) : local;
    return allreduce_->allreduce(switched(sent, {0, dim_}, config_.dense_switch, dense_));
  }
  bool passes_through() const override { return one_rank_; }
  bool select_on(BatchDevice& device) override {
    return feedback_ && move_feedback_to(device, sparsify_, dim_, feedback_);
  }
  const SparseVector* residual() const override { return feedback_ ? &feedback_->residual() : nullptr; }

  // The dense switch may have been tuned from this run's timings: a resumed run takes the
  // saved one, or its collectives would choose dense and sparse differently.
  void save_state(StateWriter& out) const override {
    out.put(config_.dense_switch.density);
    if (feedback_) feedback_->save_state(out);
  }
  void load_state(StateReader& in) override {
    config_.dense_switch.density = in.get<double>();
    if (!one_rank_) allreduce_ = make_sparse_allreduce<float>(algorithm_, comm_, dim_, config_);
    if (feedback_) feedback_->load_state(in);
  }

 private:
  CountedComm& comm_;
  std::string algorithm_;
  uint32_t dim_;
  bool one_rank_;
  CollectiveConfig config_;
  std::unique_ptr<SparseAllreduce<float>> allreduce_;
  SparsifyOptions sparsify_;
  std::unique_ptr<Feedback> feedback_;  // with --density or --k
  Stream<float> dense_;  // what is sent, when it is past the dense switch
};

// The collectives' flags (CollectiveConfig), which the top-k strategies' warm-up also
// reads; --density and --k come from the top-k family.
class LosslessSparseFamily final : public StrategyFamily {
 public:
  void declare_flags(CLI::App& t, StrategyFlags& flags) const override {
    auto& collective = flags.get<CollectiveConfig>();
    collective.tune_dense_switch = true;  // unless --dense-switch says otherwise
    t.add_option("--group-size", collective.group_size,
                 "dsar-early: ranks per group that go dense together (a divisor of P is used)")
        ->transform(cli::positive_whole<int>())
        ->capture_default_str();
    t.add_option("--dense-switch", collective.dense_switch.density,
                 "sparse strategies: density past which a stream is sent and summed dense (default: derived from "
                 "the network and summation speed measured at start-up)")
        ->transform(cli::number_from_to(0, 1))
        ->each([&collective](const std::string&) { collective.tune_dense_switch = false; });
    t.add_option_function<std::string>(
         "--pack-runs",
         [&collective](const std::string& v) {
           collective.pack_runs = v == "auto" ? std::nullopt : std::optional<bool>(v == "on");
         },
         "K-class models: send updates packed into runs of consecutive indices, on | off | auto (default auto: "
         "the lossless strategies pack where the network measured at start-up makes it pay, top-k ones always)")
        ->transform(cli::one_of({"auto", "on", "off"}));
  }
  void identity(const StrategyFlags& flags, std::vector<std::pair<std::string, std::string>>& lines) const override {
    const auto& c = flags.get<CollectiveConfig>();
    lines.emplace_back("group-size", fmt::format("{}", c.group_size));
    lines.emplace_back("dense-switch", c.tune_dense_switch ? "tuned" : fmt::format("{}", c.dense_switch.density));
  }
};

}  // namespace

const StrategyFamily& lossless_sparse_family() {
  static const LosslessSparseFamily family;
  return family;
}

std::unique_ptr<Strategy> make_lossless_sparse(const StrategyContext& context, const std::string& algorithm) {
  SparsifyOptions sparsify = context.flags.get<SparsifyOptions>();
  sparsify.seed = context.step.seed;
  sparsify.columns = context.columns;
  return std::make_unique<LosslessSparse>(context, algorithm, sparsify);
}

}  // namespace mpisgd
