#pragma once
// `mpisgd train`: load, train, report, save. Collective over `comm`.
#include <cstdint>
#include <string>

#include <mpi.h>

#include "sgd/early_stop.h"
#include "sgd/step_defaults.h"
#include "sgd/trainer.h"
#include "strategies/strategy_flags.h"

namespace mpisgd {

struct TrainConfig {
  std::string data, test, model = "logreg", strategy = "sparse-auto";
  // --multiclass, with K >= 3 classes (model/loss.h): ovr | softmax | crammer-singer;
  // empty, the model's default: softmax for logreg (docs/performance.md#multiclass), ovr
  // for svm
  std::string multiclass;
  std::string lr_schedule = "invscaling";
  double l2 = 0;
  // A batch or lr of 0 is `auto`, resolved from the data at start (sgd/step_defaults.h).
  TrainOptions sgd{.epochs = 20, .batch = 0, .lr = 0};
  EarlyStopOptions stop;  // --tol, --n-iter-no-change, --no-early-stop
  std::string profile, save_model;
  bool zero_based = false;
  uint64_t dim = 0;
  std::string feature_order = "popularity";  // --feature-order: popularity | file (data/feature_order.h)
  std::string max_memory = "auto";  // --max-memory, data/csr_memory.h
  std::string checkpoint, resume;  // --checkpoint DIR, --resume DIR (checkpoint/)
  int checkpoint_every = 0;        // 0: not given
  double checkpoint_seconds = 0;   // 0: not given
  double comm_timeout = 60;        // --comm-timeout seconds, 0: off (comm/watchdog.h; started by the app)
  // The strategy's own flags (--servers, --density, ...), as its family declared them
  // (strategies/strategy.h, StrategyFamily).
  StrategyFlags strategy_flags;
};

// Throws JobFailed on every rank on bad input or configuration.
void run_train(const TrainConfig& config, MPI_Comm comm);

}  // namespace mpisgd
