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
// one model on every rank; a round is cut short there. H is --sync-every, or auto: set
// after the run's second average from what it cost (strategies/sync_period.h).
#include <algorithm>
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
#include "strategies/sync_period.h"

namespace mpisgd {
namespace {

class LocalSgd final : public Strategy {
 public:
  explicit LocalSgd(const StrategyContext& c)
      : comm_(c.comm), dim_(c.dim), every_(c.flags.get<LocalSgdConfig>().sync_every),
        settled_(c.flags.get<LocalSgdConfig>().given()),
        config_(tuned(c.flags.get<CollectiveConfig>(), c.comm, sizeof(float))),
        allreduce_(make_sparse_allreduce<float>("ssar-split-ag", c.comm, c.dim, config_)), moved_(c.dim),
        one_rank_(c.comm.size() == 1) {
    if (c.step.adagrad)
      throw std::invalid_argument("--lr-schedule adagrad: local-sgd averages the models, not AdaGrad's "
                                  "per-coordinate sums; choose another schedule or a synchronous strategy");
    if (one_rank_) {
      spdlog::info("local-sgd: one rank, no models to average");
    } else if (settled_) {
      spdlog::info("local-sgd: models averaged every {} steps", every_);
    } else {
      start_auto(c);
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
    if (steps_ == 0) round_start_ = MPI_Wtime();
    ++steps_;
  }
  void after_epoch(int /*epoch*/, Weights& w) override {
    if (!one_rank_ && steps_ > 0) average(w);
  }

  // The period closes the epoch's row: an auto one is settled by then.
  std::vector<std::string> profile_columns() const override { return {"rounds", "sync_every"}; }
  StrategyColumns epoch_columns(MPI_Comm /*comm*/) override {
    if (one_rank_) return {{{"rounds", "0"}, {"sync_every", "0"}}, fmt::format("{:>5} one rank, no averages", "")};
    return {{{"rounds", fmt::format("{}", rounds_)}, {"sync_every", fmt::format("{}", every_)}},
            fmt::format("{:>5} {} model averages, every {} steps", "", rounds_, every_)};
  }

  // An epoch ends on a mean, where a checkpoint is taken: what a resumed run needs is the
  // model itself, whose copy it marks again, the tuned dense switch and the period (0
  // while an auto one is not yet set).
  void save_state(StateWriter& out) const override {
    out.put(config_.dense_switch.density);
    out.put<uint64_t>(settled_ ? every_ : 0);
  }
  void load_state(StateReader& in) override {
    config_.dense_switch.density = in.get<double>();
    if (const auto every = in.get<uint64_t>(); every > 0 && !settled_) {
      every_ = every;
      settled_ = true;
      spdlog::info("local-sgd: averaging every {} steps, as the checkpointed run settled", every_);
    }
    allreduce_ = make_sparse_allreduce<float>("ssar-split-ag", comm_, dim_, config_);
    based_ = false;
  }

 private:
  // Collective: the first rounds are the longest allowed, and what they cost sets the rest.
  void start_auto(const StrategyContext& c) {
    if (!c.train) throw std::invalid_argument("local-sgd: an auto --sync-every needs the training rows");
    const auto rows = static_cast<int64_t>(c.train->rows());
    int64_t most_rows = 0;
    MPI_Allreduce(&rows, &most_rows, 1, MPI_INT64_T, MPI_MAX, comm_.raw());
    const uint64_t batch = std::max<uint64_t>(1, c.step.batch);
    const uint64_t steps = (static_cast<uint64_t>(most_rows) + batch - 1) / batch;
    every_ = most_ = most_sync_every(steps);
    latency_ = average_latency(config_.measured ? config_.measured->network : measure_alpha_beta(comm_.raw()),
                               comm_.size());
    spdlog::info("local-sgd: --sync-every auto: the first two averages after {} steps each (at least {} averages "
                 "in an epoch's {}), then the fewest steps whose average costs at most {:.0f}% of their compute",
                 most_, kLeastAveragesPerEpoch, steps, 100 * kAveragingShare);
  }

  // Collective: every rank's model becomes the mean of all of them.
  void average(Weights& w) {
    const double start = MPI_Wtime();
    moved_list_.clear();
    moved_.drain(moved_list_);
    w.write_changes(moved_list_, changes_);
    const Stream<float>& sum = allreduce_->allreduce(switched(changes_, {0, dim_}, config_.dense_switch, dense_));
    w.take_mean_change(changes_, sum, comm_.size());
    // The first average allocates its buffers and costs several times the next: the
    // second is the one measured.
    if (!settled_ && ++unsettled_averages_ == 2) settle({steps_, start - round_start_, MPI_Wtime() - start});
    steps_ = 0;
    ++rounds_;
  }

  // Collective: every rank takes the longest period any rank's figures allow, so that all
  // average at the same steps.
  void settle(const MeasuredAverage& measured) {
    const auto mine = static_cast<int64_t>(sync_every_from(measured, latency_, most_));
    int64_t every = 0;
    MPI_Allreduce(&mine, &every, 1, MPI_INT64_T, MPI_MAX, comm_.raw());
    every_ = static_cast<uint64_t>(every);
    settled_ = true;
    spdlog::info("local-sgd: the second average of {} steps took {:.3g} ms against {:.3g} ms of their compute "
                 "(latency term {:.0f} us): averaging every {} steps{}",
                 measured.steps, 1e3 * measured.average_seconds, 1e3 * measured.compute_seconds, 1e6 * latency_, every_,
                 every_ == most_ ? ", the most allowed" : "");
  }

  CountedComm& comm_;
  uint32_t dim_;
  uint64_t every_;
  bool settled_;        // every_ is final: given, or set by an auto period's second average
  uint64_t most_ = 0;   // auto: the longest period allowed
  double latency_ = 0;  // auto: an average's latency term, seconds
  double round_start_ = 0;
  int unsettled_averages_ = 0;
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
    t.add_option_function<std::string>(
         "--sync-every", [&c](const std::string& v) { c.sync_every = v == "auto" ? 0 : std::stoull(v); },
         "local-sgd: steps each rank takes alone between model averages (H); auto: the fewest whose average "
         "costs at most a tenth of their compute (measured on the second average), with at least 8 averages an "
         "epoch")
        ->transform(cli::positive_whole<uint64_t>().or_word("auto"))
        ->default_str("auto");
  }
  void check(const std::string& strategy, bool own, const StrategyFlags& flags, int /*ranks*/) const override {
    if (!own && flags.get<LocalSgdConfig>().given())
      throw std::invalid_argument("--sync-every is for --strategy local-sgd, not " + strategy);
    if (own && flags.get<SparsifyOptions>().requested())
      throw std::invalid_argument("--density and --k sparsify the update; local-sgd averages whole models, "
                                  "losslessly");
  }
  void identity(const StrategyFlags& flags, std::vector<std::pair<std::string, std::string>>& lines) const override {
    const LocalSgdConfig& c = flags.get<LocalSgdConfig>();
    lines.emplace_back("sync-every", c.given() ? fmt::format("{}", c.sync_every) : "auto");
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
