#pragma once
// How a rank's update reaches the model. The trainer drives every strategy through these
// hooks, after MPI-SGD's executor (thesis section 4.2.2: InitStrategy = constructor,
// PreEpoch, GetModel, SendModelUpdate, PostEpoch, GetWorkerNumber), checked against the
// strategies on the roadmap:
//   - dense allreduce / lossless sparse allreduce: exchange() reduces and applies the sum;
//   - top-k with error feedback: exchange() keeps the residual of what did not make it
//     into the global result, so it sees both the local update and the reduced one;
//   - parameter servers (sync/async, sharded): workers pull the features of the coming
//     batch in refresh() and push in exchange(); server ranks have Role::serve and the
//     trainer calls serve() on them instead of taking steps; an asynchronous worker need
//     not take the empty steps of a rank whose rows ran out (lockstep()).
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "collectives/sparse_allreduce.h"
#include "collectives/topk_allreduce.h"
#include "comm/counted_comm.h"
#include "comm/state_blob.h"
#include "data/dataset.h"
#include "model/weights.h"
#include "profile/epoch_profile.h"
#include "ps/ps_config.h"
#include "sparse/error_feedback.h"
#include "sparse/sparse_vector.h"

namespace mpisgd {

// What every strategy is built from.
struct StrategyContext {
  CountedComm& comm;
  uint32_t dim;
  CollectiveConfig collective{};  // for strategies built on a sparse collective
  SparsifyOptions sparsify{};     // top-k with error feedback (--density, --k, --select, ...)
  TopkCollectiveConfig topk{};    // for strategies built on a top-k collective
  ParameterServerConfig ps{};     // parameter servers (--servers, --max-staleness, step rules)
  const Dataset* train = nullptr;  // this rank's rows (parameter servers balance shards on them)
};

class Strategy {
 public:
  enum class Role { train, serve };

  virtual ~Strategy() = default;

  // A serving rank trains nothing: each epoch the trainer calls before_epoch(), serve()
  // and after_epoch(), and serve() returns once every training rank finished the epoch.
  virtual Role role() const { return Role::train; }
  virtual void serve(int /*epoch*/) {}
  // True when every rank must take every step of the epoch, empty batches included, as
  // collectives need; false lets a rank stop after its own batches.
  virtual bool lockstep() const { return true; }
  // For a strategy that is not lockstep: whether this rank takes another step after
  // `taken` steps of the epoch, its rows making `own` of them. Past them the rank starts
  // another pass over its rows, reshuffled. The default stops once its rows are done.
  virtual bool another_step(uint64_t taken, uint64_t own) const { return taken < own; }

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
  // What this rank holds back for later steps (error feedback's residual); null when the
  // strategy sends every update whole.
  virtual const SparseVector* residual() const { return nullptr; }
  // Returns once `w` holds the whole model, for evaluation and saving (parameter servers
  // gather it from the shards); every rank's `w` is then the same.
  virtual void after_epoch(int /*epoch*/, Weights& /*w*/) {}
  // Adds the strategy's own measures of the epoch (parameter servers: role, push, pull
  // and wait times, staleness) to this rank's record.
  virtual void add_to_record(EpochRecord& /*record*/) {}

  // Checkpoints (checkpoint/): what this rank keeps from step to step besides the model,
  // saved at an epoch's end and loaded by every rank at the same point of a resumed run,
  // which then continues as the uninterrupted run would.
  virtual void save_state(StateWriter& /*out*/) const {}
  // Collective. Throws std::runtime_error for a state this strategy did not write.
  virtual void load_state(StateReader& /*in*/) {}
};

struct StrategyInfo {
  std::string name;
  std::string summary;
  std::unique_ptr<Strategy> (*make)(const StrategyContext&);
  // Every rank sends its whole update to the ranks that train, so the model is allreduce's
  // (up to the order of the additions).
  bool lossless = false;
};

// Every strategy the trainer knows, in the order --help lists them.
const std::vector<StrategyInfo>& strategy_registry();
// Throws std::invalid_argument naming the known strategies if `name` is not one.
std::unique_ptr<Strategy> make_strategy(const std::string& name, const StrategyContext& context);

}  // namespace mpisgd
