#pragma once
// Top-k sparse allreduce, the lossy half of the collectives (Ok-Topk paper, Li & Hoefler
// PPoPP'22, Table 1; sparse AllReduce thesis section 2.4). Every rank passes the pairs its
// top-k selection kept (about k of them, sparse/topk_select.h); all ranks end with the same
// global update. What an algorithm leaves out of that update (gTop-k's merges, Ok-Topk's
// global selection) is handed back in `dropped`, for the caller's residual:
//
//   sum over ranks of `selected` == result + sum over ranks of `dropped`
//
// exactly for integer-valued floats, so error feedback loses no mass. An MPI-like
// collective usable without the trainer:
//
//   mpisgd::CountedComm comm(MPI_COMM_WORLD);
//   auto ar = mpisgd::make_topk_allreduce<float>("oktopk", comm, n, {});
//   const mpisgd::Stream<float>& update = ar->allreduce(selected, k, dropped);
//
// Adding an algorithm is one file in src/collectives/ and one line in topk_registry.cpp.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "comm/counted_comm.h"
#include "comm/state_blob.h"
#include "sparse/stream.h"

namespace mpisgd {

struct TopkCollectiveConfig {
  // Ok-Topk: steps between recomputing the region boundaries (section 3.1.2) and between
  // exact global thresholds (section 3.1.3, reused in between).
  uint32_t repartition_period = 64;
  uint32_t reuse_period = 32;
  // Weights per feature, as CollectiveConfig::columns: with K >= 2 the global selections
  // keep whole features (sparse/feature_select.h), and the pairs cross packed into runs
  // unless pack_runs is off, whatever the network (their messages are about k pairs, and
  // the top-k strategies are for networks where bytes are dear).
  uint32_t columns = 1;
  bool pack_runs = true;
  bool packs() const { return columns > 1 && pack_runs; }
};

template <class V>
class TopkAllreduce {
 public:
  virtual ~TopkAllreduce() = default;
  // Collective. `selected`: this rank's kept pairs, a stream over [0, N) (sparse, indices
  // ascending); `k`: the per-rank budget the selection aimed at, the same on every rank.
  // Returns the global update, a stream over [0, N), valid until the next call. `dropped`
  // (capacity for N) is set to what this rank hands back: a stream over [0, N), empty when
  // the algorithm keeps everything (TopkA, TopkDSA).
  virtual const Stream<V>& allreduce(const Stream<V>& selected, uint64_t k, Stream<V>& dropped) = 0;

  // Checkpoints (checkpoint/): what an algorithm carries from call to call (Ok-Topk's
  // regions, reused threshold and call count), so that a resumed run makes the calls the
  // uninterrupted one would. Stateless algorithms keep the defaults. load_state is
  // collective and throws std::runtime_error for a state it did not write.
  virtual void save_state(StateWriter& /*out*/) const {}
  virtual void load_state(StateReader& /*in*/) {}
};

// Table 1's communication volume, per rank and call, in bytes: `pair_bytes` a (index,
// value) pair, `value_bytes` a dense value.
struct TopkVolumeInputs {
  uint64_t k = 0;
  int ranks = 1;
  uint64_t dim = 0;
  double pair_bytes = 8, value_bytes = 4;
};

template <class V>
struct TopkCollectiveInfo {
  std::string name;
  std::string summary;
  std::unique_ptr<TopkAllreduce<V>> (*make)(CountedComm&, uint32_t dim, const TopkCollectiveConfig&);
  // Table 1: the bytes a rank sends per call; lower and upper bound (equal where Table 1
  // gives one figure).
  double (*volume_low)(const TopkVolumeInputs&);
  double (*volume_high)(const TopkVolumeInputs&);
};

// Every top-k algorithm, in the order benchmarks list them.
template <class V>
const std::vector<TopkCollectiveInfo<V>>& topk_allreduce_registry();

// Throws std::invalid_argument naming the known algorithms if `name` is not one.
template <class V>
std::unique_ptr<TopkAllreduce<V>> make_topk_allreduce(const std::string& name, CountedComm& comm, uint32_t dim,
                                                      const TopkCollectiveConfig& config);

}  // namespace mpisgd
