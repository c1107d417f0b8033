// allreduce_bench: the micro-benchmark of thesis section 5.2. Every rank draws a sparse
// vector of k = density * N distinct indices over [0, N), and each allreduce algorithm of
// the registry (src/collectives/registry.cpp) sums them; MPI_Allreduce of the dense
// vector ("dense") is the baseline every other time is divided by. Each top-k allreduce
// (src/collectives/topk_registry.cpp) is given the same k pairs as a rank's top-k
// selection, with that k.
//
//   mpirun -np P build/allreduce_bench --dim N --density D [--dist uniform|powerlaw]
//          [--algo all|NAME[,NAME]] [--reps R] [--min-time S] [--rounds K] [--warmup W]
//          [--type float|double]
//          [--group-size G] [--tie-trials T] [--tie-seconds S] [--tie-factor F] [--dense-switch X]
//          [--seed S] [--input-sets I] [--csv FILE]
//
// Per algorithm, rank 0 prints: the median, 25% and 75% quantile of the time of one call
// (each call's time is the slowest rank's; the quantiles are over the reps: at least R,
// and as many more as fit in S seconds, as the OSU benchmarks give small messages more
// iterations, since a median of a few sub-millisecond calls on oversubscribed cores is
// mostly noise; they are taken in K rounds over all algorithms, so that drift of the
// machine's speed during the run favours none), the bytes
// sent and received per rank per call (CountedComm's counters, mean over ranks), the
// bytes the cost model (thesis Table 3.1, cost_model.h) predicts for this k, N and P,
// the ratio of the two, the density of the result, and the time relative to "dense".
// The top-k allreduces follow in a table of their own: the same times and bytes, the bytes
// sent by the busiest rank, and Table 1's volume of the Ok-Topk paper (bytes sent per rank
// per call, low..high) in place of the cost model's.
//
// The inputs are drawn once: one set by default, reused on every rep, or --input-sets of
// them (the thesis drew five), which the calls take in turn. A merge reused on the same
// streams learns their order in the branch predictor, where a trainer's merges meet fresh
// indices every step. Each algorithm's first call, on the first set, is checked and is
// not timed: a lossless one's result against a plain MPI_Allreduce of the dense inputs, a
// top-k one's by conservation (result + the sum over ranks of what it dropped == that
// MPI_Allreduce), both to a relative 1e-5.
#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <mpi.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <optional>
#include <random>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "apps/allreduce_bench/options.h"
#include "apps/allreduce_bench/reference_sum.h"
#include "apps/allreduce_bench/report.h"
#include "cli/parse_args.h"
#include "collectives/cost_model.h"
#include "collectives/sparse_allreduce.h"
#include "collectives/topk_allreduce.h"
#include "comm/counted_comm.h"
#include "comm/extrema.h"
#include "comm/job_error.h"
#include "comm/log.h"
#include "comm/shared_slots.h"
#include "comm/thread_level.h"
#include "profile/quantile.h"
#include "sparse/sample.h"
#include "sparse/stream.h"
#include "sparse/stream_sum.h"

namespace {

using namespace mpisgd;
using namespace mpisgd::bench;

std::vector<std::string> split_list(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream in(s);
  for (std::string item; std::getline(in, item, ',');) {
    if (!item.empty()) out.push_back(item);
  }
  return out;
}

// ---------------------------------------------------------------------------------------
// The benchmark

template <class V>
class Bench {
 public:
  Bench(const Options& o, MPI_Comm world) : o_(o), comm_(world), rank_(comm_.rank()), p_(comm_.size()) {
    config_.tune_dense_switch = o.dense_switch < 0;
    if (o.dense_switch >= 0) config_.dense_switch.density = o.dense_switch;
    config_.group_size = o.group_size;
    config_.tie_trials = o.tie_trials;
    config_.tie_seconds = o.tie_seconds;
    config_.tie_factor = o.tie_factor;
    config_.cold_calls = 0;
  }

  int run() {
    const std::vector<std::string> names = algorithms(shared_window_room(comm_.raw()));
    config_ = tuned(config_, comm_, sizeof(V));
    make_inputs();
    // Every algorithm in every round (in reverse order in odd rounds), so that a machine
    // whose speed drifts during the run favours none of them.
    std::vector<Trial> trials(names.size());
    for (int round = 0; round < o_.rounds; ++round)
      for (size_t n = 0; n < names.size(); ++n) {
        const size_t i = round % 2 ? names.size() - 1 - n : n;
        measure(names[i], round, trials[i]);
      }
    std::vector<Row> rows;
    for (Trial& t : trials) rows.push_back(summarise(t));

    // The analytical volume: the cost model with alpha = 0 and beta = 1 (seconds = bytes).
    CostInputs in;
    in.ranks = p_;
    in.dim = o_.dim;
    in.k = static_cast<double>(k_);
    // Table 3.1's expectation is for uniform indices over [0, N); for skewed ones, the
    // effective index space is fitted to the observed result size, as auto does.
    in.universe = o_.dist == "uniform" ? static_cast<double>(o_.dim)
                                       : fit_universe(in.k, static_cast<double>(reference_->nonzeros()), p_, o_.dim);
    in.group_size = o_.group_size;
    in.value_bytes = sizeof(V);
    in.dense_switch = config_.dense_switch;
    in.network = AlphaBeta{0.0, 1.0};
    in.mean_volume = true;
    const CostModel bytes_model(in);
    TopkVolumeInputs volume;
    volume.k = k_;
    volume.ranks = p_;
    volume.dim = o_.dim;
    volume.pair_bytes = sizeof(Pair<V>);
    volume.value_bytes = sizeof(V);
    for (Row& r : rows) {
      if (const TopkCollectiveInfo<V>* topk = find_topk(r.algo)) {
        r.volume_low = topk->volume_low(volume);
        r.volume_high = topk->volume_high(volume);
        continue;
      }
      const CollectiveInfo<V>* info = find(r.algo);
      // auto streams with its own dense switch, so only the algorithm it ran is told.
      if (info->cost) r.analytical = info->cost(bytes_model);
    }
    if (rank_ == 0) {
      const RunFacts facts{o_, p_, k_, config_.dense_switch.density, reference_->nonzeros()};
      print_report(facts, rows);
      if (!o_.csv.empty()) append_csv(facts, rows);
    }
    std::string wrong;
    for (const Row& r : rows) {
      if (r.wrong) wrong += (wrong.empty() ? "" : ", ") + r.algo;
    }
    if (!wrong.empty() && rank_ == 0) {
      std::fprintf(stderr, "allreduce_bench: FAILED: wrong sums (or lost mass) from %s (see the errors above)\n",
                   wrong.c_str());
    }
    return wrong.empty() ? 0 : 1;
  }

 private:
  // `room`: what a shared window may take here (shared_window_room); "all" leaves out the
  // algorithms whose window does not fit, saying so.
  std::vector<std::string> algorithms(uint64_t room) const {
    std::vector<std::string> names;
    if (o_.algo == "all") {
      for (const auto& info : sparse_allreduce_registry<V>()) {
        if (info.shared_bytes && info.shared_bytes(o_.dim, p_) > room) {
          if (rank_ == 0) std::printf("  %s left out: its shared window does not fit here\n", info.name.c_str());
          continue;
        }
        names.push_back(info.name);
      }
      for (const auto& info : topk_allreduce_registry<V>()) names.push_back(info.name);
    } else {
      names = split_list(o_.algo);
      for (const std::string& n : names) {
        if (!find(n) && !find_topk(n)) {
          std::string known;
          for (const auto& info : sparse_allreduce_registry<V>()) known += ", " + info.name;
          for (const auto& info : topk_allreduce_registry<V>()) known += ", " + info.name;
          throw std::invalid_argument("--algo: unknown algorithm '" + n + "' (known: all" + known + ")");
        }
      }
      // The baseline is always measured, first: every time is relative to it.
      names.erase(std::remove(names.begin(), names.end(), "dense"), names.end());
      names.insert(names.begin(), "dense");
    }
    return names;
  }

  static const CollectiveInfo<V>* find(const std::string& name) {
    for (const auto& info : sparse_allreduce_registry<V>()) {
      if (info.name == name) return &info;
    }
    return nullptr;
  }

  static const TopkCollectiveInfo<V>* find_topk(const std::string& name) {
    for (const auto& info : topk_allreduce_registry<V>()) {
      if (info.name == name) return &info;
    }
    return nullptr;
  }

  void make_inputs() {
    k_ = std::min<uint64_t>(o_.dim, static_cast<uint64_t>(std::llround(o_.density * o_.dim)));
    inputs_.resize(static_cast<size_t>(o_.input_sets));
    selected_.resize(inputs_.size());
    for (size_t s = 0; s < inputs_.size(); ++s) {
      // Set 0 draws what a single set always drew, so earlier figures stay reproducible.
      std::vector<uint64_t> key{o_.seed, static_cast<uint64_t>(rank_), uint64_t{0x5eed}};
      if (s > 0) key.push_back(s);
      std::seed_seq seq(key.begin(), key.end());
      std::mt19937_64 rng(seq);
      std::vector<uint32_t> index =
          o_.dist == "uniform" ? distinct_indices(o_.dim, k_, rng) : skewed_indices(o_.dim, k_, o_.skew, rng);
      // Nonzero values of either sign, |v| in [0.1, 1).
      std::uniform_real_distribution<double> mag(0.1, 1.0);
      std::bernoulli_distribution neg(0.5);
      std::vector<V> value(index.size());
      for (V& v : value) v = static_cast<V>(neg(rng) ? -mag(rng) : mag(rng));

      inputs_[s].reserve(o_.dim);
      encode<V>(index, value, Range{0, o_.dim}, config_.dense_switch, inputs_[s]);
      // A top-k selection is handed over as pairs (dense only past the byte bound).
      selected_[s].reserve(o_.dim);
      encode<V>(index, value, Range{0, o_.dim}, kByteBound, selected_[s]);
      if (s == 0) reference_.emplace(index, value, o_.dim, comm_.raw());
    }
    dropped_.reserve(o_.dim);
  }

  // The set the next call takes (every rank the same one, as they make the same calls).
  size_t next_set() { return next_call_++ % inputs_.size(); }

  struct Trial {
    Row row;
    std::vector<double> times;  // this rank's, of every timed call
    int reps_per_round = 0;
    CommStats moved;
  };

  // One round of one algorithm: a fresh object, an untimed call (in round 0 the checked
  // one, then the warm-up calls), then the round's timed calls. The first round sets how
  // many: enough for min-time over all rounds, at least reps over all rounds.
  void measure(const std::string& name, int round, Trial& trial) {
    Row& row = trial.row;
    row.algo = name;
    if (find_topk(name)) {
      row.lossy = true;
      std::unique_ptr<TopkAllreduce<V>> ar = make_topk_allreduce<V>(name, comm_, o_.dim, TopkCollectiveConfig{});
      auto call = [&]() -> const Stream<V>& { return ar->allreduce(selected_[next_set()], k_, dropped_); };
      if (round == 0) {
        row.wrong = !reference_->verify(name, ar->allreduce(selected_[0], k_, dropped_), &dropped_);
        for (int i = 1; i < o_.warmup; ++i) call();
      } else {
        call();
      }
      time_calls(round, trial, call);
      return;
    }
    std::unique_ptr<SparseAllreduce<V>> ar = make_sparse_allreduce<V>(name, comm_, o_.dim, config_);
    auto call = [&]() -> const Stream<V>& { return ar->allreduce(inputs_[next_set()]); };
    if (round == 0) {
      row.wrong = !reference_->verify(name, ar->allreduce(inputs_[0]));
      for (int i = 1; i < o_.warmup; ++i) call();
    } else {
      call();
    }
    // auto times a near tie over the calls that follow it, then makes the algorithm it
    // settles on afresh: those calls and that algorithm's first are untimed here, so that
    // its timed calls measure what it settled on warm, as the others' are measured. (Its
    // cold calls are off: the process is warm once round 0 has run.)
    if (ar->timing_tie()) {
      while (ar->timing_tie()) call();
      call();
    }
    time_calls(round, trial, call);
    if (!ar->choice().empty()) row.note = "ran " + ar->choice();
  }

  // The round's timed calls of `call`, their bytes, and the density of the last result.
  template <class Call>
  void time_calls(int round, Trial& trial, Call call) {
    const CommStats before = comm_.stats();
    const Stream<V>* result = nullptr;
    int reps = round == 0 ? 1 : trial.reps_per_round;
    for (int r = 0; r < reps; ++r) {
      MPI_Barrier(comm_.raw());
      const double start = MPI_Wtime();
      result = &call();
      trial.times.push_back(MPI_Wtime() - start);
      if (round == 0 && r == 0) {  // the same count on every rank
        double first = trial.times.back();
        MPI_Allreduce(MPI_IN_PLACE, &first, 1, MPI_DOUBLE, MPI_MAX, comm_.raw());
        const int rounds = o_.rounds;
        const int want = static_cast<int>(std::ceil(o_.min_time / std::max(first, 1e-9) / rounds));
        reps = trial.reps_per_round = std::clamp(want, (o_.reps + rounds - 1) / rounds, kMaxReps / rounds);
      }
    }
    trial.moved = trial.moved + (comm_.stats() - before);
    if (result) trial.row.result_density = static_cast<double>(nonzeros(*result)) / o_.dim;
  }

  Row summarise(Trial& trial) {
    Row row = trial.row;
    const int reps = static_cast<int>(trial.times.size());
    row.reps = reps;
    MPI_Allreduce(MPI_IN_PLACE, trial.times.data(), reps, MPI_DOUBLE, MPI_MAX, comm_.raw());
    uint64_t sums[2] = {trial.moved.bytes_sent, trial.moved.bytes_received};
    MPI_Allreduce(MPI_IN_PLACE, sums, 2, MPI_UINT64_T, MPI_SUM, comm_.raw());
    const auto max_sent = static_cast<uint64_t>(max_over_ranks(comm_.raw(), static_cast<int64_t>(trial.moved.bytes_sent)));
    if (reps > 0) {
      row.median = quantile(trial.times, 0.5);
      row.p25 = quantile(trial.times, 0.25);
      row.p75 = quantile(trial.times, 0.75);
      const double calls = reps;
      row.sent = static_cast<double>(sums[0]) / p_ / calls;
      row.received = static_cast<double>(sums[1]) / p_ / calls;
      row.sent_max = static_cast<double>(max_sent) / calls;
    }
    return row;
  }

  const Options& o_;
  CountedComm comm_;
  int rank_, p_;
  CollectiveConfig config_;
  uint64_t k_ = 0;
  std::vector<Stream<V>> inputs_;
  std::vector<Stream<V>> selected_;  // the top-k allreduces' inputs, as pairs
  Stream<V> dropped_;                // what a top-k allreduce hands back
  uint64_t next_call_ = 0;
  std::optional<ReferenceSum<V>> reference_;
};

std::string algo_help() {
  std::string help = "all, or a comma-separated list of (dense, the baseline, is always run):";
  for (const auto& info : sparse_allreduce_registry<float>()) help += "\n  " + info.name + ": " + info.summary;
  help += "\ntop-k allreduces (lossy; each rank's k pairs are its selection):";
  for (const auto& info : topk_allreduce_registry<float>()) help += "\n  " + info.name + ": " + info.summary;
  return help;
}

}  // namespace

int main(int argc, char** argv) {
  if (!mpisgd::init_mpi(argc, argv, MPI_THREAD_FUNNELED)) return 1;
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);

  Options o;
  CLI::App app{"allreduce_bench: every sparse and top-k allreduce on synthetic sparse vectors (thesis section 5.2)"};
  app.footer(
      "Each rank draws k = density * dim distinct indices (seeded by --seed and its rank) with random nonzero "
      "values; the inputs are drawn once and reused on every rep (--input-sets: that many, taken in turn). Each "
      "algorithm's first call, on the first set, is checked against "
      "MPI_Allreduce of the dense vectors (relative tolerance 1e-5; a wrong sum is reported and the exit status is "
      "1) and is not timed; a top-k allreduce's result plus the sum of what the ranks dropped is checked alike. "
      "Times are the slowest rank's per call; bytes are CountedComm's counters per rank per call; 'analytical' is "
      "the cost model (cost_model.h, thesis Table 3.1) evaluated with alpha = 0, beta = 1; 'Table 1' is the Ok-Topk "
      "paper's volume of a top-k allreduce.");
  app.add_option("--dim", o.dim, "vector dimension N")->check(CLI::Range(uint32_t{1}, UINT32_MAX))->capture_default_str();
  app.add_option("--density", o.density, "nonzeros per rank / N, in (0, 1]")
      ->check(CLI::Range(0.0, 1.0))
      ->capture_default_str();
  app.add_option("--dist", o.dist, "index distribution: uniform, or powerlaw (floor(N u^skew): skewed to low indices)")
      ->check(CLI::IsMember({"uniform", "powerlaw"}))
      ->capture_default_str();
  app.add_option("--skew", o.skew, "exponent of powerlaw (1 = uniform)")->check(CLI::Range(1.0, 100.0))->capture_default_str();
  app.add_option("--algo", o.algo, algo_help())->capture_default_str();
  app.add_option("--reps", o.reps, "timed calls per algorithm, at least")->check(CLI::Range(1, kMaxReps))->capture_default_str();
  app.add_option("--min-time", o.min_time, "seconds of timed calls per algorithm: more reps for quick calls (0: exactly --reps)")
      ->check(CLI::Range(0.0, 3600.0))
      ->capture_default_str();
  app.add_option("--rounds", o.rounds, "rounds over all algorithms, each timing a share of the reps")
      ->check(CLI::Range(1, 100))
      ->capture_default_str();
  app.add_option("--warmup", o.warmup, "untimed calls before the timed ones; the first is the checked call, made even with 0")
      ->check(CLI::Range(0, 1000000))
      ->capture_default_str();
  app.add_option("--type", o.type, "value type")->check(CLI::IsMember({"float", "double"}))->capture_default_str();
  app.add_option("--group-size", o.group_size, "early-switching DSAR: ranks per group")
      ->check(CLI::Range(1, 1 << 20))
      ->capture_default_str();
  app.add_option("--tie-factor", o.tie_factor, "auto: algorithms predicted within this factor of the fastest are timed")
      ->check(CLI::Range(1.0, 1e300))
      ->capture_default_str();
  app.add_option("--tie-trials", o.tie_trials,
                 "auto: runs of each algorithm in a near tie to time it (0: the model alone decides)")
      ->check(CLI::Range(0, 100))
      ->capture_default_str();
  app.add_option("--tie-seconds", o.tie_seconds,
                 "auto: a quick algorithm in a near tie gets more runs, until they add up to this (at most 32)")
      ->check(CLI::Range(0.0, 3600.0))
      ->capture_default_str();
  app.add_option("--dense-switch", o.dense_switch,
                 "density at which a stream goes dense (default: derived from the network and summation speed "
                 "measured at start-up)")
      ->check(CLI::Range(0.0, 1.0));
  app.add_option("--seed", o.seed, "input seed (rank r uses seed and r)")->capture_default_str();
  app.add_option("--input-sets", o.input_sets,
                 "input vectors each rank draws, the calls taking them in turn: with one, merges reused on the "
                 "same indices are learnt by the branch predictor and run faster than a trainer's (each set "
                 "holds two N-sized buffers)")
      ->check(CLI::Range(1, 16))
      ->capture_default_str();
  app.add_option("--csv", o.csv, "append one row per algorithm to this CSV file (header if new)");
  app.add_option("--log-level", o.log_level, "trace|debug|info|warn|error|off (debug shows auto's choices)")
      ->check(CLI::IsMember({"trace", "debug", "info", "warn", "error", "off"}))
      ->capture_default_str();

  if (const std::optional<int> code = mpisgd::cli::parse_args(app, argc, argv, rank == 0)) {
    MPI_Finalize();
    return *code;
  }
  mpisgd::init_logging(rank, o.log_level);
  if (o.density <= 0) {
    if (rank == 0) std::fprintf(stderr, "allreduce_bench: --density must be above 0\n");
    MPI_Finalize();
    return 2;
  }

  int status = 0;
  try {
    status = o.type == "float" ? Bench<float>(o, MPI_COMM_WORLD).run() : Bench<double>(o, MPI_COMM_WORLD).run();
  } catch (const std::invalid_argument& e) {
    // Argument errors are found alike on every rank, before any communication.
    if (rank == 0) std::fprintf(stderr, "allreduce_bench: %s\n", e.what());
    MPI_Finalize();
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "allreduce_bench: rank %d: %s\n", rank, e.what());
    mpisgd::abort_job(MPI_COMM_WORLD);
  }
  MPI_Finalize();
  return status;
}
