// auto: before each call, predicts every algorithm's time with the alpha-beta model of
// cost_model.h (thesis Table 3.1) and runs the fastest. alpha and beta are measured once,
// at construction, by a ping-pong (comm/alpha_beta.h), and so is the speed of summation
// (sparse/summation_speed.h), unless the configuration carries them already (a tuned
// dense switch measures them too). The inputs are the largest input size k, refreshed
// every 16 calls by a non-blocking allreduce that the next call finishes (so it costs no
// latency), and the result size K of the previous call, from which the effective index
// space is fitted; on the first call indices are assumed uniform over [0, N). Every rank
// sees the same k, K and measurements, so all choose alike.
#include <algorithm>
#include <limits>

#include <spdlog/spdlog.h>

#include "collectives/cost_model.h"
#include "collectives/sparse_allreduce.h"

namespace mpisgd {
namespace {

// Non-zeros of a result; a dense one is sampled (every rank samples the same values of
// the same result), as counting all N would cost a tenth of a dense allreduce. 4096
// samples estimate a 10% density to within half a point; 65536, spread over every third
// cache line of a 3.2M result, made auto's dense calls 5-10% slower than dense's.
template <class V>
double result_size(const Stream<V>& s) {
  if (!s.is_dense()) return s.count();
  constexpr size_t kSamples = 1 << 12;
  const auto values = s.values();
  const size_t step = std::max<size_t>(1, values.size() / kSamples);
  size_t seen = 0, nonzero = 0;
  for (size_t i = 0; i < values.size(); i += step, ++seen) nonzero += values[i] != V{0};
  return seen ? static_cast<double>(nonzero) / static_cast<double>(seen) * static_cast<double>(values.size()) : 0;
}

template <class V>
class SparseAuto final : public SparseAllreduce<V> {
 public:
  SparseAuto(CountedComm& comm, uint32_t dim, const CollectiveConfig& config)
      : comm_(comm), dim_(dim), config_(config),
        speed_(config.measured ? *config.measured : measure_machine_speed(comm.raw())) {
    for (const auto& info : sparse_allreduce_registry<V>()) {
      if (info.cost) candidates_.push_back(Candidate{&info, nullptr});
    }
    spdlog::debug("auto allreduce: alpha {:.2e} s, gap {:.2e} s, beta {:.2e} s/byte ({:.0f} MB/s), merge {:.2f} ns/item, "
                  "dense add {:.2f} ns/value, {:.2g} ranks per core, dense switch at {:.1f}%",
                  speed_.network.alpha, speed_.network.gap, speed_.network.beta, speed_.network.beta > 0 ? 1e-6 / speed_.network.beta : 0.0,
                  speed_.compute.merge_item_s * 1e9, speed_.compute.dense_element_s * 1e9, speed_.core_sharing,
                  config_.dense_switch.density * 100);
  }

  const Stream<V>& allreduce(const Stream<V>& input) override {
    CountedComm::Timed timed(comm_);
    const uint64_t local_k = input.is_dense() ? dim_ : input.count();
    if (calls_ == 0) {  // nothing from before
      MPI_Allreduce(&local_k, &k_max_, 1, MPI_UINT64_T, MPI_MAX, comm_.raw());
      count_k_exchange();
    } else if (k_request_ != MPI_REQUEST_NULL) {
      MPI_Wait(&k_request_, MPI_STATUS_IGNORE);
    }
    const uint64_t k = k_max_;
    if (calls_++ % kRefreshK == 0) {
      k_local_ = local_k;
      MPI_Iallreduce(&k_local_, &k_max_, 1, MPI_UINT64_T, MPI_MAX, comm_.raw(), &k_request_);
      count_k_exchange();
    }

    CostInputs in;
    in.ranks = comm_.size();
    in.dim = dim_;
    in.k = static_cast<double>(k);
    in.universe = last_result_ < 0 ? dim_ : fit_universe(last_k_, last_result_, in.ranks, dim_);
    in.group_size = config_.group_size;
    in.value_bytes = sizeof(V);
    in.dense_switch = config_.dense_switch;
    in.network = speed_.network;
    in.compute = speed_.compute;
    in.core_sharing = speed_.core_sharing;
    const CostModel model(in);

    Candidate* best = nullptr;
    double best_seconds = std::numeric_limits<double>::infinity();
    for (Candidate& c : candidates_) {
      const double s = c.info->cost(model);
      spdlog::trace("auto allreduce: k {} M {:.3g}: {} predicted {:.3g} s", k, in.universe, c.info->name, s);
      if (s < best_seconds) best_seconds = s, best = &c;
    }
    if (best != chosen_) {
      spdlog::debug("auto allreduce: k {} M {:.3g}: {} (predicted {:.3g} s)", k, in.universe, best->info->name,
                    best_seconds);
      chosen_ = best;
    }
    // Every rank reaches this point with the same choice, so the collective
    // construction (communicator splits) of a first use is safe.
    if (!best->algorithm) best->algorithm = best->info->make(comm_, dim_, config_);
    const Stream<V>& result = best->algorithm->allreduce(input);
    last_k_ = static_cast<double>(k);
    last_result_ = result_size(result);
    return result;
  }

  std::string choice() const override { return chosen_ ? chosen_->info->name : std::string(); }

  ~SparseAuto() override {
    if (k_request_ != MPI_REQUEST_NULL) MPI_Wait(&k_request_, MPI_STATUS_IGNORE);
  }

 private:
  void count_k_exchange() {
    comm_.count_sent(sizeof(uint64_t));
    comm_.count_received(sizeof(uint64_t));
  }

  struct Candidate {
    const CollectiveInfo<V>* info;
    std::unique_ptr<SparseAllreduce<V>> algorithm;  // made on first use
  };

  CountedComm& comm_;
  uint32_t dim_;
  CollectiveConfig config_;
  MachineSpeed speed_;
  std::vector<Candidate> candidates_;
  Candidate* chosen_ = nullptr;
  double last_k_ = 0, last_result_ = -1;
  // Even a non-blocking allreduce per call costs a synchronisation when ranks share
  // cores; input sizes drift slowly, so k is refreshed every kRefreshK calls.
  static constexpr uint64_t kRefreshK = 16;
  uint64_t calls_ = 0;
  uint64_t k_local_ = 0, k_max_ = 0;  // the buffers of the allreduce in flight
  MPI_Request k_request_ = MPI_REQUEST_NULL;
};

}  // namespace

template <class V>
std::unique_ptr<SparseAllreduce<V>> make_sparse_auto(CountedComm& comm, uint32_t dim, const CollectiveConfig& c) {
  return std::make_unique<SparseAuto<V>>(comm, dim, c);
}
template std::unique_ptr<SparseAllreduce<float>> make_sparse_auto(CountedComm&, uint32_t, const CollectiveConfig&);
template std::unique_ptr<SparseAllreduce<double>> make_sparse_auto(CountedComm&, uint32_t, const CollectiveConfig&);

}  // namespace mpisgd
