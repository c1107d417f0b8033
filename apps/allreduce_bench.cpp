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
//          [--seed S] [--csv FILE]
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
// The inputs are drawn once and are the same on every rep (the thesis drew five sets);
// each algorithm's first call is checked and is not timed: a lossless one's result against
// a plain MPI_Allreduce of the dense inputs, a top-k one's by conservation (result + the
// sum over ranks of what it dropped == that MPI_Allreduce), both to a relative 1e-5.
#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <mpi.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <limits>
#include <memory>
#include <optional>
#include <random>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "collectives/cost_model.h"
#include "collectives/sparse_allreduce.h"
#include "collectives/topk_allreduce.h"
#include "comm/counted_comm.h"
#include "comm/extrema.h"
#include "comm/log.h"
#include "comm/thread_level.h"
#include "profile/quantile.h"
#include "sparse/sample.h"
#include "sparse/stream.h"
#include "sparse/stream_sum.h"

namespace {

using namespace mpisgd;

constexpr int kMaxReps = 1000;

struct Options {
  uint32_t dim = 1 << 20;
  double density = 1e-3;
  std::string dist = "uniform";
  double skew = 3.0;
  std::string algo = "all";
  int reps = 10;
  double min_time = 0.2;
  int rounds = 3;
  int warmup = 1;
  std::string type = "float";
  int group_size = 8;
  int tie_trials = CollectiveConfig{}.tie_trials;
  double tie_seconds = CollectiveConfig{}.tie_seconds;
  double tie_factor = CollectiveConfig{}.tie_factor;
  double dense_switch = -1;  // tuned to the measured network and summation speed
  uint64_t seed = 1;
  std::string csv;
  std::string log_level = "warn";
};

// ---------------------------------------------------------------------------------------
// Inputs

// k distinct indices of [0, n), ascending. uniform: every k-subset equally likely (Floyd's
// algorithm). powerlaw: floor(n u^skew) for u uniform in [0, 1): index i is drawn with
// probability ~ (i/n)^(1/skew - 1), so low indices are much more popular and the ranks'
// sets overlap far more than uniform ones; duplicates are dropped and more are drawn until
// there are k (after many rounds, uniform draws fill in the rest).
std::vector<uint32_t> draw_indices(uint32_t n, uint64_t k, const std::string& dist, double skew,
                                   std::mt19937_64& rng) {
  if (dist == "uniform") return distinct_indices(n, k, rng);
  std::vector<uint32_t> out;
  out.reserve(k);
  IndexBitmap seen(n);
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  for (int round = 0; out.size() < k && round < 64; ++round) {
    for (uint64_t missing = k - out.size(); missing > 0; --missing) {
      const auto i = static_cast<uint64_t>(static_cast<double>(n) * std::pow(unit(rng), skew));
      const uint64_t idx = std::min<uint64_t>(i, n - 1);
      if (seen.insert(idx)) out.push_back(static_cast<uint32_t>(idx));
    }
  }
  std::uniform_int_distribution<uint32_t> any(0, n - 1);
  while (out.size() < k) {
    const uint32_t idx = any(rng);
    if (seen.insert(idx)) out.push_back(idx);
  }
  std::sort(out.begin(), out.end());
  return out;
}

// ---------------------------------------------------------------------------------------
// Small helpers

std::string human_bytes(double b) {
  if (!std::isfinite(b)) return "-";
  if (b < 1e3) return fmt::format("{:.0f} B", b);
  if (b < 1e6) return fmt::format("{:.2f} kB", b / 1e3);
  if (b < 1e9) return fmt::format("{:.2f} MB", b / 1e6);
  return fmt::format("{:.2f} GB", b / 1e9);
}

std::string ms(double s) { return std::isfinite(s) ? fmt::format("{:.3f}", s * 1e3) : "-"; }

std::vector<std::string> split_list(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream in(s);
  for (std::string item; std::getline(in, item, ',');) {
    if (!item.empty()) out.push_back(item);
  }
  return out;
}

// Sums `n` values over all ranks in pieces MPI's int counts can take (uncounted: this is
// the benchmark's reference, not an algorithm under test).
template <class V>
void reference_sum(std::vector<V>& v, MPI_Comm comm) {
  for (size_t done = 0; done < v.size();) {
    const size_t count = std::min(kMaxMpiCount, v.size() - done);
    MPI_Allreduce(MPI_IN_PLACE, v.data() + done, static_cast<int>(count), mpi_type<V>(), MPI_SUM, comm);
    done += count;
  }
}

struct Row {
  std::string algo;
  bool wrong = false;
  double median = NAN, p25 = NAN, p75 = NAN;
  double sent = NAN, received = NAN, sent_max = NAN;  // per rank per call
  double analytical = NAN;
  double result_density = NAN;
  std::string note;
  int reps = 0;
  bool lossy = false;                          // a top-k allreduce
  double volume_low = NAN, volume_high = NAN;  // Table 1, bytes sent per rank per call
};

// measured / analytical bytes; 1 when both are 0 (one rank sends nothing).
double ratio(const Row& r) {
  if (r.sent == 0 && r.analytical == 0) return 1.0;
  return r.sent / r.analytical;
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
    const std::vector<std::string> names = algorithms();
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
                                       : fit_universe(in.k, static_cast<double>(ref_nonzeros_), p_, o_.dim);
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
      print(rows);
      if (!o_.csv.empty()) write_csv(rows);
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
  std::vector<std::string> algorithms() const {
    std::vector<std::string> names;
    if (o_.algo == "all") {
      for (const auto& info : sparse_allreduce_registry<V>()) names.push_back(info.name);
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
    std::seed_seq seq{o_.seed, static_cast<uint64_t>(rank_), uint64_t{0x5eed}};
    std::mt19937_64 rng(seq);
    index_ = draw_indices(o_.dim, k_, o_.dist, o_.skew, rng);
    // Nonzero values of either sign, |v| in [0.1, 1).
    std::uniform_real_distribution<double> mag(0.1, 1.0);
    std::bernoulli_distribution neg(0.5);
    value_.resize(index_.size());
    for (V& v : value_) v = static_cast<V>(neg(rng) ? -mag(rng) : mag(rng));

    input_.reserve(o_.dim);
    encode<V>(index_, value_, Range{0, o_.dim}, config_.dense_switch, input_);
    // A top-k selection is handed over as pairs (dense only past the byte bound).
    selected_.reserve(o_.dim);
    encode<V>(index_, value_, Range{0, o_.dim}, kByteBound, selected_);
    dropped_.reserve(o_.dim);

    // Reference: MPI_Allreduce of the dense inputs, and of their magnitudes for the
    // tolerance: |got - want| <= 1e-5 (|want| + sum |inputs|), which allows for any
    // summation order yet catches a missing or doubled contribution.
    ref_.assign(o_.dim, V{0});
    tol_.assign(o_.dim, V{0});
    for (size_t j = 0; j < index_.size(); ++j) {
      ref_[index_[j]] = value_[j];
      tol_[index_[j]] = std::abs(value_[j]);
    }
    reference_sum(ref_, comm_.raw());
    reference_sum(tol_, comm_.raw());
    ref_nonzeros_ = 0;
    for (uint32_t i = 0; i < o_.dim; ++i) {
      tol_[i] = static_cast<V>(1e-5 * (std::abs(static_cast<double>(ref_[i])) + static_cast<double>(tol_[i])));
      ref_nonzeros_ += ref_[i] != V{0};
    }
  }

  // Collective: every rank's result against the reference; true if all match. A lossy
  // algorithm's result is checked with what the ranks `dropped` added back: conservation.
  bool verify(const std::string& name, const Stream<V>& result, const Stream<V>* dropped = nullptr) {
    std::vector<V> got(o_.dim);
    write_dense(result, Range{0, o_.dim}, got.data());
    if (dropped) {
      std::vector<V> lost(o_.dim);
      write_dense(*dropped, Range{0, o_.dim}, lost.data());
      reference_sum(lost, comm_.raw());
      for (uint32_t i = 0; i < o_.dim; ++i) got[i] += lost[i];
    }
    const char* what = dropped ? " of result + dropped" : "";
    uint64_t bad = 0, first = 0;
    for (uint32_t i = 0; i < o_.dim; ++i) {
      const double diff = std::abs(static_cast<double>(got[i]) - static_cast<double>(ref_[i]));
      if (!(diff <= static_cast<double>(tol_[i]))) {  // also catches NaN
        if (bad++ == 0) first = i;
      }
    }
    if (bad) {
      spdlog::error("{}: WRONG RESULT on rank {}: {} of {} values{} differ from MPI_Allreduce; first at index {}: "
                    "got {}, want {} (result {} with {} items)",
                    name, rank_, bad, o_.dim, what, first, got[first], ref_[first],
                    result.is_dense() ? "dense" : "sparse", result.count());
    }
    uint64_t total = bad;
    MPI_Allreduce(MPI_IN_PLACE, &total, 1, MPI_UINT64_T, MPI_SUM, comm_.raw());
    if (total && rank_ == 0) {
      std::fprintf(stderr, "allreduce_bench: ERROR: %s gives a wrong %s (%llu wrong values over all ranks)\n",
                   name.c_str(), dropped ? "sum of result and dropped" : "sum",
                   static_cast<unsigned long long>(total));
    }
    return total == 0;
  }

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
      auto call = [&]() -> const Stream<V>& { return ar->allreduce(selected_, k_, dropped_); };
      if (round == 0) {
        row.wrong = !verify(name, call(), &dropped_);
        for (int i = 1; i < o_.warmup; ++i) call();
      } else {
        call();
      }
      time_calls(round, trial, call);
      return;
    }
    std::unique_ptr<SparseAllreduce<V>> ar = make_sparse_allreduce<V>(name, comm_, o_.dim, config_);
    if (round == 0) {
      row.wrong = !verify(name, ar->allreduce(input_));
      for (int i = 1; i < o_.warmup; ++i) ar->allreduce(input_);
    } else {
      ar->allreduce(input_);
    }
    // auto times a near tie over the calls that follow it, then makes the algorithm it
    // settles on afresh: those calls and that algorithm's first are untimed here, so that
    // its timed calls measure what it settled on warm, as the others' are measured. (Its
    // cold calls are off: the process is warm once round 0 has run.)
    if (ar->timing_tie()) {
      while (ar->timing_tie()) ar->allreduce(input_);
      ar->allreduce(input_);
    }
    time_calls(round, trial, [&]() -> const Stream<V>& { return ar->allreduce(input_); });
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

  void print(const std::vector<Row>& rows) const {
    const double dense_median = rows.front().median;  // "dense" is always first
    fmt::print("allreduce_bench: P={} N={} density={:g} (k={} per rank) dist={}{} type={} reps>={} min-time={:g}s "
               "rounds={} warmup={} dense-switch={:g} group-size={}\n",
               p_, o_.dim, o_.density, k_, o_.dist, o_.dist == "powerlaw" ? fmt::format(" (skew {:g})", o_.skew) : "",
               o_.type, o_.reps, o_.min_time, o_.rounds, o_.warmup, config_.dense_switch.density, o_.group_size);
    fmt::print("  inputs drawn once (seed {}), the same every rep; reference result density {:.4g} ({} nonzeros)\n",
               o_.seed, static_cast<double>(ref_nonzeros_) / o_.dim, ref_nonzeros_);
    fmt::print("  time: slowest rank per call, quantiles over reps; bytes: per rank per call, mean over ranks\n");
    fmt::print("  analytical: cost_model.h with alpha=0, beta=1 (Table 3.1 + 8-byte headers, dense switch, fold), "
               "index space M={}\n",
               o_.dist == "uniform" ? std::string("N (uniform)")
                                    : fmt::format("{:.4g} (fitted to the result size)",
                                                  fit_universe(static_cast<double>(k_),
                                                               static_cast<double>(ref_nonzeros_), p_, o_.dim)));
    fmt::print("\n{:<14} {:>10} {:>10} {:>10} {:>8} {:>11} {:>11} {:>11} {:>11} {:>9} {:>9}  {}\n", "algorithm",
               "median ms", "p25 ms", "p75 ms", "vs dense", "sent/rank", "recv/rank", "sent max", "analytical",
               "meas/anal", "res dens", "note");
    for (const Row& r : rows) {
      if (r.lossy) continue;
      std::string note = r.note;
      if (r.wrong) note = "WRONG RESULT" + (note.empty() ? "" : "; " + note);
      if (std::isfinite(r.analytical) && std::abs(ratio(r) - 1) > 0.1) {
        note += std::string(note.empty() ? "" : "; ") + ">10% off analytical";
      }
      const double vs = r.median / dense_median;
      fmt::print("{:<14} {:>10} {:>10} {:>10} {:>8} {:>11} {:>11} {:>11} {:>11} {:>9} {:>9.4g}  {}\n", r.algo,
                 ms(r.median), ms(r.p25), ms(r.p75), vs >= 0.01 ? fmt::format("{:.3f}", vs) : fmt::format("{:.1e}", vs),
                 human_bytes(r.sent),
                 human_bytes(r.received), human_bytes(r.sent_max), human_bytes(r.analytical),
                 std::isfinite(r.analytical) ? fmt::format("{:.3f}", ratio(r)) : "-", r.result_density, note);
    }
    if (std::any_of(rows.begin(), rows.end(), [](const Row& r) { return r.lossy; })) print_topk(rows, dense_median);
    std::fflush(stdout);
  }

  void print_topk(const std::vector<Row>& rows, double dense_median) const {
    fmt::print("\ntop-k allreduces: each rank's k={} pairs are its selection; checked by conservation (result + "
               "dropped == MPI_Allreduce)\n",
               k_);
    fmt::print("  Table 1: the Ok-Topk paper's volume, bytes sent per rank per call, low..high (an algorithm's "
               "comment says whether it means the mean rank or the busiest)\n");
    fmt::print("\n{:<14} {:>10} {:>10} {:>10} {:>8} {:>11} {:>11} {:>11} {:>21} {:>9}  {}\n", "algorithm",
               "median ms", "p25 ms", "p75 ms", "vs dense", "sent/rank", "recv/rank", "sent max", "Table 1",
               "res dens", "note");
    for (const Row& r : rows) {
      if (!r.lossy) continue;
      std::string note = r.note;
      if (r.wrong) note = "LOST OR ADDED MASS" + (note.empty() ? "" : "; " + note);
      auto in_band = [&](double b) { return b >= 0.9 * r.volume_low && b <= 1.1 * r.volume_high; };
      if (!in_band(r.sent) && !in_band(r.sent_max)) {
        note += std::string(note.empty() ? "" : "; ") + "mean and busiest >10% outside Table 1";
      }
      const std::string band = r.volume_low == r.volume_high
                                   ? human_bytes(r.volume_low)
                                   : human_bytes(r.volume_low) + ".." + human_bytes(r.volume_high);
      const double vs = r.median / dense_median;
      fmt::print("{:<14} {:>10} {:>10} {:>10} {:>8} {:>11} {:>11} {:>11} {:>21} {:>9.4g}  {}\n", r.algo, ms(r.median),
                 ms(r.p25), ms(r.p75), vs >= 0.01 ? fmt::format("{:.3f}", vs) : fmt::format("{:.1e}", vs),
                 human_bytes(r.sent), human_bytes(r.received), human_bytes(r.sent_max), band, r.result_density, note);
    }
  }

  void write_csv(const std::vector<Row>& rows) const {
    namespace fs = std::filesystem;
    const fs::path path(o_.csv);
    if (path.has_parent_path()) fs::create_directories(path.parent_path());
    const bool fresh = !fs::exists(path) || fs::file_size(path) == 0;
    std::ofstream out(path, std::ios::app);
    if (!out) throw std::runtime_error("cannot open " + o_.csv + " for appending");
    if (fresh) {
      out << "ranks,dim,density,k,dist,type,dense_switch,group_size,reps,algo,median_s,p25_s,p75_s,time_vs_dense,"
             "sent_bytes,received_bytes,sent_max_bytes,analytical_bytes,measured_over_analytical,result_density,"
             "reference_density,correct,auto_ran,lossy,table1_low_bytes,table1_high_bytes\n";
    }
    const double dense_median = rows.front().median;
    for (const Row& r : rows) {
      out << fmt::format("{},{},{:g},{},{},{},{:g},{},{},{},{:.6e},{:.6e},{:.6e},{:.4f},{:.1f},{:.1f},{:.1f},{:.1f},{:.4f},"
                         "{:.6g},{:.6g},{},{},{},{:.1f},{:.1f}\n",
                         p_, o_.dim, o_.density, k_, o_.dist, o_.type, config_.dense_switch.density, o_.group_size, r.reps, r.algo,
                         r.median, r.p25, r.p75, r.median / dense_median, r.sent, r.received, r.sent_max,
                         r.analytical, ratio(r), r.result_density,
                         static_cast<double>(ref_nonzeros_) / o_.dim, r.wrong ? 0 : 1,
                         r.algo == "auto" ? r.note : "", r.lossy ? 1 : 0, r.volume_low, r.volume_high);
    }
    if (!out.flush()) throw std::runtime_error("write to " + o_.csv + " failed");
  }

  const Options& o_;
  CountedComm comm_;
  int rank_, p_;
  CollectiveConfig config_;
  uint64_t k_ = 0;
  std::vector<uint32_t> index_;
  std::vector<V> value_;
  Stream<V> input_;
  Stream<V> selected_, dropped_;  // the top-k allreduces' input and what they hand back
  std::vector<V> ref_, tol_;
  uint64_t ref_nonzeros_ = 0;
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
      "values; the inputs are drawn once and reused on every rep. Each algorithm's first call is checked against "
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
  app.add_option("--csv", o.csv, "append one row per algorithm to this CSV file (header if new)");
  app.add_option("--log-level", o.log_level, "trace|debug|info|warn|error|off (debug shows auto's choices)")
      ->check(CLI::IsMember({"trace", "debug", "info", "warn", "error", "off"}))
      ->capture_default_str();

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int code = rank == 0 ? app.exit(e) : e.get_exit_code();
    MPI_Finalize();
    return code;
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
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  MPI_Finalize();
  return status;
}
