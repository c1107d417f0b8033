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
#include <utility>
#include <vector>

#include <mpi.h>

#include "comm/counted_comm.h"
#include "comm/state_blob.h"
#include "data/dataset.h"
#include "device/batch_device.h"
#include "model/weights.h"
#include "profile/epoch_profile.h"
#include "sparse/sparse_vector.h"
#include "sparse/stream.h"
#include "strategies/apply_sum.h"
#include "strategies/strategy_flags.h"

namespace CLI {
class App;
}

namespace mpisgd {

// How the trainer takes a step, for strategies that take it elsewhere (parameter servers
// apply steps on the servers) or draw random numbers (top-k's sampled selections).
struct StepRules {
  double l2 = 0;
  bool adagrad = false;
  double adagrad_start = 0;  // the value AdaGrad's sums start at
  int threads = 1;
  uint64_t batch = 1;  // rows per worker step
  uint64_t seed = 1;
};

// What every strategy is built from.
struct StrategyContext {
  CountedComm& comm;
  uint32_t dim;  // weights: features x columns
  StrategyFlags flags{};  // each family's settings, as its flags left them
  StepRules step{};
  const Dataset* train = nullptr;  // this rank's rows (parameter servers balance shards on them)
  uint32_t columns = 1;            // weights per feature: K with K >= 3 classes (model/loss.h)
};

class SummingStrategy;

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
  // Combines this rank's update (the rank's share of the mean gradient: a sparse stream
  // over [0, N), as many pairs as it has non-zeros) with every other rank's and takes the
  // step with learning rate `eta`; returns once `w` holds the new model. Returns the
  // number of non-zeros of the combined update.
  virtual uint64_t exchange(const Stream<float>& local, double eta, Weights& w) = 0;
  // True when exchange() would take the step with `local` exactly as given (one rank and
  // a lossless combination): the trainer then skips handing the update over.
  virtual bool passes_through() const { return false; }
  // This strategy as a SummingStrategy (below), or null where it steps the model its own
  // way (parameter servers, local SGD).
  virtual SummingStrategy* summing() { return nullptr; }
  // True when each rank steps with the mean gradient of its own batch rather than its
  // share of the global batch's (local SGD, between its model averages).
  virtual bool steps_alone() const { return false; }
  // What this rank holds back for later steps (error feedback's residual); null when the
  // strategy sends every update whole.
  virtual const SparseVector* residual() const { return nullptr; }
  // Returns once `w` holds the whole model, for evaluation and saving (parameter servers
  // gather it from the shards); every rank's `w` is then the same.
  virtual void after_epoch(int /*epoch*/, Weights& /*w*/) {}
  // Adds what the strategy's own threads sent and received in the epoch to this rank's
  // record, and notes its own measures of the epoch for epoch_columns().
  virtual void add_to_record(EpochRecord& /*record*/) {}
  // The columns the strategy adds to the profile after the common ones (parameter
  // servers: roles, push, pull and wait times, staleness); the same on every rank.
  virtual std::vector<std::string> profile_columns() const { return {}; }
  // Collective, once an epoch's record is complete: the epoch's values of those columns,
  // on rank 0.
  virtual StrategyColumns epoch_columns(MPI_Comm /*comm*/) { return {}; }

  // Checkpoints (checkpoint/): what this rank keeps from step to step besides the model,
  // saved at an epoch's end and loaded by every rank at the same point of a resumed run,
  // which then continues as the uninterrupted run would.
  virtual void save_state(StateWriter& /*out*/) const {}
  // Collective. Throws std::runtime_error for a state this strategy did not write.
  virtual void load_state(StateReader& /*in*/) {}
};

// A strategy whose exchange() is: combine every rank's update into one sum, then step
// with it (the dense, lossless sparse and top-k allreduces). Its step is the one thing it
// does to the model, so a device that holds the model (device/batch_device.h) can take it
// in the strategy's place.
class SummingStrategy : public Strategy {
 public:
  // Every rank's update combined, with this rank's `local` among them: the step's
  // gradient, a stream over [0, N) that stays valid until the next call.
  virtual const Stream<float>& combine(const Stream<float>& local) = 0;

  uint64_t exchange(const Stream<float>& local, double eta, Weights& w) final {
    return apply_sum(combine(local), eta, w);
  }
  SummingStrategy* summing() final { return this; }
  // For a strategy that selects top-k with error feedback, on a device that holds the
  // model: moves the feedback to `device` where it can keep it (BatchDevice::make_feedback)
  // and returns true; combine() then takes its update from the device, and `local` is
  // empty. Says at start where the selection runs.
  virtual bool select_on(BatchDevice& /*device*/) { return false; }
};

// What the job needs of a family of strategies before one is built: the family's flags
// and their checks, and which ranks train. One object per family, in the family's file.
class StrategyFamily {
 public:
  virtual ~StrategyFamily() = default;
  // Declares the family's flags on the train command, their values kept in `flags`. Every
  // family's flags are declared whichever strategy runs.
  virtual void declare_flags(CLI::App& /*train*/, StrategyFlags& /*flags*/) const {}
  // Throws std::invalid_argument naming the flag when `flags` cannot run `strategy` on
  // `ranks` ranks. Asked of every family: `own` says whether `strategy` is one of this
  // family's, and a family refuses its flags given to another family's strategy where
  // they would be silently ignored.
  virtual void check(const std::string& /*strategy*/, bool /*own*/, const StrategyFlags& /*flags*/,
                     int /*ranks*/) const {}
  // How many ranks train, the first ones; the others serve.
  virtual int training_ranks(const StrategyFlags& /*flags*/, int ranks) const { return ranks; }
  // False where a rank's weights hold only the values it was sent, and the steps (with L2
  // and AdaGrad's sums) are taken elsewhere: every rank's weights then take no step rules.
  virtual bool takes_steps() const { return true; }
  // The settings a resumed run must share with the checkpoint, as key=value lines
  // (jobs/run_identity.h).
  virtual void identity(const StrategyFlags& /*flags*/,
                        std::vector<std::pair<std::string, std::string>>& /*lines*/) const {}
};

struct StrategyInfo {
  std::string name;
  std::string summary;
  const StrategyFamily& family;
  std::unique_ptr<Strategy> (*make)(const StrategyContext&);
  // Every rank sends its whole update to the ranks that train, so the model is allreduce's
  // (up to the order of the additions).
  bool lossless = false;
};

// Every strategy the trainer knows, in the order --help lists them.
const std::vector<StrategyInfo>& strategy_registry();
// Each family once, in the registry's order.
std::vector<const StrategyFamily*> strategy_families();
// "ps-sync or ps-async": the strategies of `family`, for messages.
std::string strategies_of(const StrategyFamily& family);
// Throws std::invalid_argument naming the known strategies if `name` is not one.
const StrategyInfo& find_strategy(const std::string& name);
// Every family's check of `flags` for `name` on `ranks` ranks (StrategyFamily::check).
void check_strategy(const std::string& name, const StrategyFlags& flags, int ranks);
// Checks the context's flags, then builds the strategy. Throws std::invalid_argument.
std::unique_ptr<Strategy> make_strategy(const std::string& name, const StrategyContext& context);

}  // namespace mpisgd
