#pragma once
// Sparse allreduce (thesis chapter 3): every rank holds a sparse vector over [0, N); all
// end with their sum. An MPI-like collective: called by every rank of the communicator
// with its own input, returns the same result on every rank. Usable without the trainer:
//
//   mpisgd::CountedComm comm(MPI_COMM_WORLD);
//   auto ar = mpisgd::make_sparse_allreduce<float>("ssar_split_ag", comm, n, {});
//   mpisgd::Stream<float> in(n);
//   mpisgd::encode<float>(index, value, {0, n}, {}, in);
//   const mpisgd::Stream<float>& sum = ar->allreduce(in);
//
// Adding an algorithm is one file in src/collectives/ and one line in registry.cpp.
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "comm/alpha_beta.h"
#include "comm/counted_comm.h"
#include "sparse/stream.h"
#include "sparse/summation_speed.h"

namespace mpisgd {

// What the cost model and the tuned dense switch are computed from.
struct MachineSpeed {
  AlphaBeta network;
  SummationSpeed compute;  // on one undisturbed core
  double core_sharing = 1;  // ranks per core (comm/core_sharing.h)
  uint64_t shared_room = 0;  // bytes a shared window may take (comm/shared_slots.h)
};

// Collective: measures both (a ping-pong and a summation timing, tens of milliseconds);
// every rank gets the slowest rank's figures, so all decide alike. The ping-pong talks on
// the library's communicator and is not counted.
MachineSpeed measure_machine_speed(const CountedComm& comm);

struct CollectiveConfig {
  DenseSwitch dense_switch;
  int group_size = 8;  // early-switching DSAR: ranks that go dense together
  // Weights per feature (K of a K-class model): with K >= 2 sparse streams cross packed
  // into runs of consecutive indices (collective_util.h, StreamWire), unless pack_runs
  // says no: tuned() settles it from the measured machine, off where the network carries
  // the bytes packing saves in less time than packing takes (pack_runs_pay, cost_model.h).
  uint32_t columns = 1;
  std::optional<bool> pack_runs;
  bool packs() const { return columns > 1 && pack_runs.value_or(true); }
  // Replace dense_switch by the one the measured network and summation speed call for
  // (network_dense_switch in cost_model.h): on a slow network sending dense at the
  // summation crossover would multiply the bytes.
  bool tune_dense_switch = false;
  std::optional<MachineSpeed> measured;  // filled by the first measurement
  // auto: when the model predicts several algorithms within tie_factor of the fastest,
  // the next calls run each of them once untimed and tie_trials times timed, and the
  // fastest is kept for inputs of that size (tie_trials 0: always trust the model). A
  // quick algorithm gets more timed calls, up to tie_max_trials, until they add up to
  // tie_seconds: an algorithm's first calls after its first use run several times slower
  // than it settles at, and three of them are mostly noise.
  double tie_factor = 2;
  int tie_trials = 3;
  double tie_seconds = 5e-3;
  int tie_max_trials = 32;
  int cold_calls = 16;  // auto: calls before any tie is timed; the model's pick runs alone
};

// Collective when config.tune_dense_switch is set or config.packs(): returns `config`
// with the switch tuned for values of `value_bytes`, packing kept only where it pays
// (pack_runs_pay, cost_model.h) and the measurement kept; otherwise `config`.
CollectiveConfig tuned(CollectiveConfig config, CountedComm& comm, size_t value_bytes);

template <class V>
class SparseAllreduce {
 public:
  virtual ~SparseAllreduce() = default;
  // Collective. `input` is a stream over [0, N) (see encode()); the result is valid
  // until the next call.
  virtual const Stream<V>& allreduce(const Stream<V>& input) = 0;
  // A selector (auto) names the algorithm that served the last call; others say nothing.
  virtual std::string choice() const { return {}; }
  // A selector is timing a near tie over its next calls (the same on every rank).
  virtual bool timing_tie() const { return false; }
};

class CostModel;

template <class V>
struct CollectiveInfo {
  std::string name;
  std::string summary;
  std::unique_ptr<SparseAllreduce<V>> (*make)(CountedComm&, uint32_t dim, const CollectiveConfig&);
  // Predicted seconds of one call (cost_model.h); null for "auto", which uses the others'.
  double (*cost)(const CostModel&);
  // Sums in canonical_sum_order() (collective_util.h), so that every such algorithm
  // gives the same bits for the same inputs: auto chooses among these alone.
  bool canonical_order;
  // Bytes of a node's shared memory its window takes for N = dim over `ranks` ranks; null
  // where it takes none. Such an algorithm runs only where MachineSpeed::shared_room holds
  // its window (its factory refuses elsewhere), and auto offers it only there.
  uint64_t (*shared_bytes)(uint32_t dim, int ranks) = nullptr;
};

// Every algorithm, in the order benchmarks list them.
template <class V>
const std::vector<CollectiveInfo<V>>& sparse_allreduce_registry();

// Throws std::invalid_argument naming the known algorithms if `name` is not one.
template <class V>
std::unique_ptr<SparseAllreduce<V>> make_sparse_allreduce(const std::string& name, CountedComm& comm, uint32_t dim,
                                                          const CollectiveConfig& config);

}  // namespace mpisgd
