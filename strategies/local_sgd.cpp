// Local SGD, periodic model averaging (Zinkevich et al., NIPS 2010; McDonald et al.,
// NAACL 2010; Stich, "Local SGD converges fast and communicates little", ICLR 2019,
// Algorithm 1): each rank takes H steps alone, on the mean gradient of its own batch,
// then the ranks replace their models by the models' mean. Only what changed since the
// last mean travels: each rank's change is sparse (the features its H batches touched,
// noted as its steps pass, so a round costs no pass over all N), and a lossless sparse
// allreduce (SparCML's split allgather) sums the changes exactly, so the mean is the same
// on every rank. Cost per round of H steps: one ssar-split-ag step on the union of the
// ranks' changes over H batches, where a synchronous strategy pays H of them on single
// batches. With H = 1 a round is the synchronous step of the global batch: allreduce's model, up to
// rounding. Every epoch ends on a mean, so that evaluation, saving and checkpoints see
// one model on every rank; a round is cut short there.
#include <memory>
#include <stdexcept>
#include <string>

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <mpi.h>
#include <spdlog/spdlog.h>

#include "cli/flag_values.h"
#include "collectives/sparse_allreduce.h"
#include "ps/index_set.h"
#include "sparse/error_feedback.h"
#include "sparse/stream_sum.h"
#include "strategies/local_sgd.h"
#include "strategies/strategy.h"

namespace mpisgd {
namespace {

class LocalSgd final : public Strategy {
 public:
  explicit LocalSgd(const StrategyContext& c)
      : comm_(c.comm), dim_(c.dim), every_(c.flags.get<LocalSgdConfig>().sync_every),
        config_(tuned(c.flags.get<CollectiveConfig>(), c.comm, sizeof(float))),
        allreduce_(make_sparse_allreduce<float>("ssar-split-ag", c.comm, c.dim, config_)), moved_(c.dim),
        one_rank_(c.comm.size() == 1) {
    if (c.step.adagrad)
      throw std::invalid_argument("--lr-schedule adagrad: local-sgd averages the models, not AdaGrad's "
                                  "per-coordinate sums; choose another schedule or a synchronous strategy");
    if (one_rank_) {
      spdlog::info("local-sgd: one rank, no models to average");
    } else {
      spdlog::info("local-sgd: models averaged every {} steps", every_);
    }
  }

  // One rank's mean is its own model: its steps are plain SGD's, taken as the gradient is
  // drained, with no copy of the model to keep (that bookkeeping doubled an epoch).
  bool passes_through() const override { return one_rank_; }

  // Between averages a rank's steps are its own; the features they touch are noted for
  // the next average.
  bool steps_alone() const override { return true; }
  uint64_t exchange(const Stream<float>& local, double eta, Weights& w) override {
    w.step_pairs(eta, local.pairs());
    for (const Pair<float>& p : local.pairs()) moved_.insert(p.index);
    return local.count();
  }

  void before_epoch(int /*epoch*/) override { rounds_ = 0; }
  void refresh(const Dataset& /*data*/, std::span<const uint64_t> /*batch*/, Weights& w) override {
    if (one_rank_) return;
    if (!based_) {
      w.mark_base();
      based_ = true;
    }
    if (steps_ == every_) average(w);
    ++steps_;
  }
  void after_epoch(int /*epoch*/, Weights& w) override {
    if (!one_rank_ && steps_ > 0) average(w);
  }

  std::vector<std::string> profile_columns() const override { return {"rounds"}; }
  StrategyColumns epoch_columns(MPI_Comm /*comm*/) override {
    return {{{"rounds", fmt::format("{}", rounds_)}}, fmt::format("{:>5} {} model averages", "", rounds_)};
  }

  // An epoch ends on a mean, where a checkpoint is taken: what a resumed run needs is the
  // model itself, whose copy it marks again, and the tuned dense switch.
  void save_state(StateWriter& out) const override { out.put(config_.dense_switch.density); }
  void load_state(StateReader& in) override {
    config_.dense_switch.density = in.get<double>();
    allreduce_ = make_sparse_allreduce<float>("ssar-split-ag", comm_, dim_, config_);
    based_ = false;
  }

 private:
  // Collective: every rank's model becomes the mean of all of them.
  void average(Weights& w) {
    moved_list_.clear();
    moved_.drain(moved_list_);
    w.write_changes(moved_list_, changes_);
    const Stream<float>& sum = allreduce_->allreduce(switched(changes_, {0, dim_}, config_.dense_switch, dense_));
    w.take_mean_change(changes_, sum, comm_.size());
    steps_ = 0;
    ++rounds_;
  }

  CountedComm& comm_;
  uint32_t dim_;
  uint64_t every_;
  CollectiveConfig config_;
  std::unique_ptr<SparseAllreduce<float>> allreduce_;
  IndexSet moved_;  // the features this rank's steps touched since the last average
  std::vector<uint32_t> moved_list_;
  Stream<float> changes_, dense_;
  bool one_rank_;
  bool based_ = false;  // the weights hold the base of the round
  uint64_t steps_ = 0;  // steps since the last average
  uint64_t rounds_ = 0;  // averages this epoch
};

class LocalSgdFamily final : public StrategyFamily {
 public:
  void declare_flags(CLI::App& t, StrategyFlags& flags) const override {
    auto& c = flags.get<LocalSgdConfig>();
    t.add_option("--sync-every", c.sync_every, "local-sgd: steps each rank takes alone between model averages (H)")
        ->transform(cli::positive_whole<uint64_t>())
        ->each([&c](const std::string&) { c.given = true; })
        ->capture_default_str();
  }
  void check(const std::string& strategy, bool own, const StrategyFlags& flags, int /*ranks*/) const override {
    if (!own && flags.get<LocalSgdConfig>().given)
      throw std::invalid_argument("--sync-every is for --strategy local-sgd, not " + strategy);
    if (own && flags.get<SparsifyOptions>().requested())
      throw std::invalid_argument("--density and --k sparsify the update; local-sgd averages whole models, "
                                  "losslessly");
  }
  void identity(const StrategyFlags& flags, std::vector<std::pair<std::string, std::string>>& lines) const override {
    lines.emplace_back("sync-every", fmt::format("{}", flags.get<LocalSgdConfig>().sync_every));
  }
};

}  // namespace

const StrategyFamily& local_sgd_family() {
  static const LocalSgdFamily family;
  return family;
}

std::unique_ptr<Strategy> make_local_sgd(const StrategyContext& context) {
  return std::make_unique<LocalSgd>(context);
}

}  // namespace mpisgd
