// auto: before each call, predicts every algorithm's time with the alpha-beta model of
// cost_model.h (thesis Table 3.1) and runs the fastest. Only the algorithms that sum in
// canonical_sum_order() are candidates (dense-rec-halving standing for the dense
// allreduce), so whichever is chosen, by the model or by timing, the result has the same
// bits: the same flags give the same model run after run. alpha and beta are measured once,
// at construction, by a ping-pong (comm/alpha_beta.h), and so is the speed of summation
// (sparse/summation_speed.h), unless the configuration carries them already (a tuned
// dense switch measures them too). The inputs are the largest input size k, refreshed
// every 16 calls by a non-blocking allreduce that the next call finishes (so it costs no
// latency), and the result size K of the previous call, from which the effective index
// space is fitted; on the first call indices are assumed uniform over [0, N). Every rank
// sees the same k, K and measurements, so all choose alike.
//
// Near ties are settled by timing: on a real machine the model's error can exceed the gap
// between two algorithms (on oversubscribed cores, recursive doubling against
// split-allgather at a few hundred items per rank, or MPI's dense allreduce against the
// split reduce-scatter once inputs are dense). When several algorithms are predicted
// within tie_factor (2) of the fastest, the calls that follow (this one included) each
// run one of them on their own input, as STAR-MPI tunes collectives at run time (Faraj,
// Yuan and Lowenthal, ICS 2006): every algorithm is exact, so each call's sum is the one
// asked for, and the timing costs only what the slower candidates lose, not extra calls.
// - A fresh algorithm's first call is not timed: it maps its buffers' pages, and a first
//   touch can cost ten times a warm call.
// - Then it gets tie_trials (3) timed calls in a row, each after a barrier, or more, up to
//   tie_max_trials (32), until they add up to tie_seconds (5 ms). A call's time is the
//   slowest rank's, an algorithm's the lower quartile of its calls (of three, the
//   fastest): an algorithm's first calls run slow for a while, which the fastest of three
//   quick calls and the median of many both mistook for its speed.
// - In a row, not in rounds over the candidates: dense algorithms stream through buffers
//   of N values and evict each other's, which made the sparse ones look slower than they
//   are.
// - Inputs of the same tied set and a k of the same size class (a factor of sqrt 2) then
//   run the fastest without timing.
// - A process's first cold_calls (16) calls are not timed at all: everything in it is
//   cold then, and ties timed there went to algorithms 2-3x slower.
// A candidate counts as tied when its prediction without the wait for ranks that share a
// core is within the factor: that wait depends on how the OS schedules them, and it is
// what the model gets most wrong.
// Ties are timed only over a fast link, where moving a value costs at most kSlowLink (10)
// times what adding it does. The model's errors come from what it leaves out (caches,
// ranks sharing cores, the jitter of a ping-pong's alpha), which matters only where moving
// and adding cost about the same; on a slow link the bytes the model counts to within a
// percent decide, and timing would measure the link's transient state instead (a shaped
// link passes the first calls after a pause several times faster than its rate).
// The measurements behind each rule: docs/performance.md#measurements-behind-autos-rules.
#include <algorithm>
#include <bit>
#include <cmath>
#include <map>
#include <numeric>
#include <utility>

#include <spdlog/spdlog.h>

#include "collectives/collective_util.h"
#include "collectives/cost_model.h"
#include "collectives/sparse_allreduce.h"

namespace mpisgd {
namespace {

// Non-zeros of a result; a dense one is sampled (every rank samples the same values of
// the same result), as counting all N would cost a tenth of a dense allreduce. 64 runs of
// 64 neighbours estimate a 10% density to within a point and load 256 cache lines: 4096
// single values spread over a 3.2M result missed the cache 4096 times and made auto's
// dense calls slower than dense's own.
template <class V>
double result_size(const Stream<V>& s) {
  if (!s.is_dense()) return s.count();
  constexpr size_t kRuns = 64, kRun = 64;
  const auto values = s.values();
  if (values.size() <= kRuns * kRun) return static_cast<double>(values.size() - std::count(values.begin(), values.end(), V{0}));
  const size_t stride = values.size() / kRuns;
  size_t nonzero = 0;
  for (size_t r = 0; r < kRuns; ++r)
    for (size_t i = r * stride; i < r * stride + kRun; ++i) nonzero += values[i] != V{0};
  return static_cast<double>(nonzero) / static_cast<double>(kRuns * kRun) * static_cast<double>(values.size());
}

template <class V>
class SparseAuto final : public SparseAllreduce<V> {
 public:
  SparseAuto(CountedComm& comm, uint32_t dim, const CollectiveConfig& config)
      : comm_(comm), dim_(dim), config_(config),
        speed_(config.measured ? *config.measured : measure_machine_speed(comm)),
        time_ties_(config.tie_trials > 0 &&
                   speed_.network.beta * sizeof(V) <= kSlowLink * speed_.compute.dense_element_s) {
    for (const auto& info : sparse_allreduce_registry<V>()) {
      const bool fits = !info.shared_bytes || info.shared_bytes(dim, comm.size()) <= speed_.shared_room;
      if (info.cost && info.canonical_order && fits) {
        candidates_.push_back(Candidate{&info, nullptr});
      }
    }
    spdlog::debug("auto allreduce: alpha {:.2e} s, gap {:.2e} s, beta {:.2e} s/byte ({:.0f} MB/s), merge {:.2f} ns/item, "
                  "dense add {:.2f} ns/value, {:.2g} ranks per core, dense switch at {:.1f}%, near ties {}",
                  speed_.network.alpha, speed_.network.gap, speed_.network.beta, speed_.network.beta > 0 ? 1e-6 / speed_.network.beta : 0.0,
                  speed_.compute.merge_item_s * 1e9, speed_.compute.dense_element_s * 1e9, speed_.core_sharing,
                  config_.dense_switch.density * 100, time_ties_ ? "timed" : "left to the model");
  }

  const Stream<V>& allreduce(const Stream<V>& input) override {
    CountedComm::Timed timed(comm_);
    const uint64_t local_k = input.is_dense() ? dim_ : input.count();
    if (calls_ == 0) {  // nothing from before
      k_max_ = comm_.max(static_cast<int64_t>(local_k));
    } else if (k_request_ != MPI_REQUEST_NULL) {
      MPI_Wait(&k_request_, MPI_STATUS_IGNORE);
    }
    const auto k = static_cast<uint64_t>(k_max_);
    if (calls_++ % kRefreshK == 0) {
      k_local_ = static_cast<int64_t>(local_k);
      // Signed, as in comm/extrema.h: some MPIs take MPI_MAX on unsigned types as signed.
      k_request_ = comm_.imax(&k_local_, &k_max_);
    }

    CostInputs in;
    in.ranks = comm_.size();
    in.dim = dim_;
    in.k = static_cast<double>(k);
    in.universe = last_result_ < 0 ? dim_ : fit_universe(last_k_, last_result_, in.ranks, dim_);
    in.group_size = config_.group_size;
    in.value_bytes = sizeof(V);
    in.run_columns = config_.packs() ? config_.columns : 1;
    in.dense_switch = config_.dense_switch;
    in.network = speed_.network;
    in.compute = speed_.compute;
    in.core_sharing = speed_.core_sharing;
    const CostModel model(in);

    size_t best = 0;
    predicted_.resize(candidates_.size());
    for (size_t i = 0; i < candidates_.size(); ++i) {
      predicted_[i] = candidates_[i].info->cost(model);
      spdlog::trace("auto allreduce: k {} M {:.3g}: {} predicted {:.3g} s", k, in.universe, candidates_[i].info->name,
                    predicted_[i]);
      if (predicted_[i] < predicted_[best]) best = i;
    }
    // The wait for core-mates (CostInputs::core_sharing) is the model's least certain
    // term, so a candidate is tied if it is near the fastest with that wait left out.
    in.core_sharing = 1;
    const CostModel unshared(in);
    uint32_t tied = 0;
    for (size_t i = 0; i < candidates_.size(); ++i)
      if (std::min(predicted_[i], candidates_[i].info->cost(unshared)) <= config_.tie_factor * predicted_[best])
        tied |= uint32_t{1} << i;

    // Every rank reaches this point with the same choice, so the collective
    // construction (communicator splits) of a first use is safe.
    for (size_t i : stale_) candidates_[i].algorithm.reset();
    stale_.clear();
    const Stream<V>* result = nullptr;
    if (time_ties_ && std::popcount(tied) > 1 && calls_ > static_cast<uint64_t>(config_.cold_calls)) {
      const Key key{size_class(k), tied};
      if (auto it = settled_.find(key); it != settled_.end()) {
        best = it->second;
      } else {
        std::tie(best, result) = explore(input, key, k);
      }
    }
    Candidate& run = candidates_[best];
    if (&run != chosen_) {
      spdlog::debug("auto allreduce: k {} M {:.3g}: {} (predicted {:.3g} s)", k, in.universe, run.info->name,
                    predicted_[best]);
      chosen_ = &run;
    }
    if (!result) {
      if (!run.algorithm) run.algorithm = run.info->make(comm_, dim_, config_);
      result = &run.algorithm->allreduce(input);
    }
    last_k_ = static_cast<double>(k);
    last_result_ = result_size(*result);
    return *result;
  }

  std::string choice() const override { return chosen_ ? chosen_->info->name : std::string(); }
  bool timing_tie() const override { return !exploring_.empty(); }

  ~SparseAuto() override {
    if (k_request_ != MPI_REQUEST_NULL) MPI_Wait(&k_request_, MPI_STATUS_IGNORE);
  }

 private:
  // Two size classes per doubling of k.
  static int size_class(uint64_t k) { return static_cast<int>(std::lround(2 * std::log2(static_cast<double>(k) + 1))); }

  using Key = std::pair<int, uint32_t>;  // (size class of k, set of tied candidates)

  // A near tie being timed over calls.
  struct Exploration {
    std::vector<size_t> who;                   // the tied candidates
    std::vector<std::vector<double>> seconds;  // per candidate, its timed calls so far
  };

  // A candidate has been timed enough: tie_trials calls, and tie_seconds of them or
  // tie_max_trials.
  bool timed_enough(const std::vector<double>& times) const {
    const auto n = static_cast<int>(times.size());
    return n >= config_.tie_trials &&
           (n >= config_.tie_max_trials || std::accumulate(times.begin(), times.end(), 0.0) >= config_.tie_seconds);
  }

  // One call of a near tie's timing: runs the first tied candidate not yet timed enough
  // on `input` and returns it with its result. Once all are, the fastest is settled on,
  // and later calls with this key run it.
  std::pair<size_t, const Stream<V>*> explore(const Stream<V>& input, const Key& key, uint64_t k) {
    Exploration& e = exploring_[key];
    if (e.who.empty()) {
      for (size_t i = 0; i < candidates_.size(); ++i)
        if (key.second >> i & 1) e.who.push_back(i);
      e.seconds.resize(e.who.size());
    }
    auto not_enough = [this](const std::vector<double>& times) { return !timed_enough(times); };
    const auto j = static_cast<size_t>(std::find_if(e.seconds.begin(), e.seconds.end(), not_enough) -
                                       e.seconds.begin());
    Candidate& c = candidates_[e.who[j]];
    if (!c.algorithm) {
      c.algorithm = c.info->make(comm_, dim_, config_);
      return {e.who[j], &c.algorithm->allreduce(input)};  // first use, untimed
    }
    MPI_Barrier(comm_.raw());  // ranks start together, not in the skew the last call left
    const double start = MPI_Wtime();
    const Stream<V>* result = &c.algorithm->allreduce(input);
    // A call's time is the slowest rank's, so every rank sees the same times and agrees
    // on how many calls to time and on the fastest.
    const double took = comm_.max(MPI_Wtime() - start);
    const size_t ran = e.who[j];
    e.seconds[j].push_back(took);
    if (std::none_of(e.seconds.begin(), e.seconds.end(), not_enough)) settle(key, e, k);  // ends e
    return {ran, result};
  }

  void settle(const Key& key, Exploration& e, uint64_t k) {
    size_t fastest = 0;
    std::vector<double> best(e.who.size());
    for (size_t j = 0; j < e.who.size(); ++j) {
      auto& times = e.seconds[j];
      const auto quartile = times.begin() + static_cast<ptrdiff_t>(times.size() / 4);
      std::nth_element(times.begin(), quartile, times.end());
      best[j] = *quartile;
      spdlog::debug("auto allreduce: k {}: tie: {} predicted {:.3g} s, measured {:.3g} s (lower quartile of {} calls)",
                    k, candidates_[e.who[j]].info->name, predicted_[e.who[j]], best[j], times.size());
      if (best[j] < best[fastest]) fastest = j;
    }
    settled_.emplace(key, e.who[fastest]);
    // The timed objects are dropped before the next call (this call's result lives in
    // one of them), and the fastest is made afresh on its next use. Kept, a dense
    // allreduce whose object had run before the others' trials stayed slower on every
    // later call; made after them it runs at its own speed. Dropping them also frees the
    // losers' buffers.
    stale_.insert(stale_.end(), e.who.begin(), e.who.end());
    exploring_.erase(key);
  }

  struct Candidate {
    const CollectiveInfo<V>* info;
    std::unique_ptr<SparseAllreduce<V>> algorithm;  // made on first use
  };

  CountedComm& comm_;
  uint32_t dim_;
  CollectiveConfig config_;
  MachineSpeed speed_;
  static constexpr double kSlowLink = 10;
  bool time_ties_;
  std::vector<Candidate> candidates_;
  Candidate* chosen_ = nullptr;
  std::vector<double> predicted_;  // this call's predictions, per candidate
  std::map<Key, Exploration> exploring_;
  std::map<Key, size_t> settled_;  // -> the fastest
  std::vector<size_t> stale_;      // candidates whose objects go before the next call
  double last_k_ = 0, last_result_ = -1;
  // Even a non-blocking allreduce per call costs a synchronisation when ranks share
  // cores; input sizes drift slowly, so k is refreshed every kRefreshK calls.
  static constexpr uint64_t kRefreshK = 16;
  uint64_t calls_ = 0;
  int64_t k_local_ = 0, k_max_ = 0;  // the buffers of the allreduce in flight
  MPI_Request k_request_ = MPI_REQUEST_NULL;
};

}  // namespace

template <class V>
std::unique_ptr<SparseAllreduce<V>> make_sparse_auto(CountedComm& comm, uint32_t dim, const CollectiveConfig& c) {
  check_message_size<V>(dim, "auto");  // before any buffer is made
  return std::make_unique<SparseAuto<V>>(comm, dim, c);
}
template std::unique_ptr<SparseAllreduce<float>> make_sparse_auto(CountedComm&, uint32_t, const CollectiveConfig&);
template std::unique_ptr<SparseAllreduce<double>> make_sparse_auto(CountedComm&, uint32_t, const CollectiveConfig&);

}  // namespace mpisgd
