#pragma once
// How a rank's update reaches the model. The trainer drives every strategy through these
// hooks, after MPI-SGD's executor (thesis section 4.2.2: InitStrategy = constructor,
// PreEpoch, GetModel, SendModelUpdate, PostEpoch, GetWorkerNumber), checked against the
// strategies on the roadmap:
//   - dense allreduce / lossless sparse allreduce: exchange() reduces and applies the sum;
//   - top-k with error feedback: exchange() keeps the residual of what did not make it
//     into the global result, so it sees both the local update and the reduced one;
//   - parameter servers (sync/async, sharded): workers pull the features of the coming
//     batch in refresh() and push in exchange(); server ranks need a role hook (serve
//     instead of train), to be added with the first parameter-server strategy.
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "collectives/sparse_allreduce.h"
#include "comm/counted_comm.h"
#include "data/dataset.h"
#include "model/weights.h"
#include "sparse/sparse_vector.h"

namespace mpisgd {

// What every strategy is built from.
struct StrategyContext {
  CountedComm& comm;
  uint32_t dim;
  CollectiveConfig collective;  // for strategies built on a sparse collective
};

class Strategy {
 public:
  virtual ~Strategy() = default;

  virtual void before_epoch(int /*epoch*/) {}
  // Makes `w` current for the coming batch. Allreduce strategies hold the whole model.
  virtual void refresh(const Dataset& /*data*/, std::span<const uint64_t> /*batch*/, Weights& /*w*/) {}
  // Combines this rank's update (the rank's share of the mean gradient) with every
  // other rank's and takes the step with learning rate `eta`; returns once `w` holds the
  // new model. Returns the number of non-zeros of the combined update.
  virtual uint64_t exchange(const SparseVector& local, double eta, Weights& w) = 0;
  // True when exchange() would take the step with `local` exactly as given (one rank and
  // a lossless combination): the trainer then skips handing the update over.
  virtual bool passes_through() const { return false; }
  virtual void after_epoch(int /*epoch*/) {}
};

struct StrategyInfo {
  std::string name;
  std::string summary;
  std::unique_ptr<Strategy> (*make)(const StrategyContext&);
};

// Every strategy the trainer knows, in the order --help lists them.
const std::vector<StrategyInfo>& strategy_registry();
// Throws std::invalid_argument naming the known strategies if `name` is not one.
std::unique_ptr<Strategy> make_strategy(const std::string& name, const StrategyContext& context);

}  // namespace mpisgd
