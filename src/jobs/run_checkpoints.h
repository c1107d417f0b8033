#pragma once
// `mpisgd train`'s checkpoints: --checkpoint DIR writes one at the end of every K-th epoch
// (--checkpoint-every) and/or of the first epoch S seconds after the last one
// (--checkpoint-seconds; rank 0's clock decides for all); --resume DIR continues from the
// newest valid one. Checkpoints are taken at epoch ends only, where every strategy is
// between steps and the shuffles of later epochs need no state (they are seeded by seed,
// rank and epoch), so a resumed run takes exactly the steps the uninterrupted run would.
#include <string>

#include <mpi.h>

#include "data/dataset.h"
#include "jobs/train_job.h"
#include "model/weights.h"
#include "sgd/early_stop.h"
#include "sgd/trainer.h"
#include "strategies/strategy.h"

namespace mpisgd {

class RunCheckpoints {
 public:
  // Collective; does nothing unless --checkpoint or --resume is given. Throws JobFailed on
  // every rank for a directory it cannot create.
  RunCheckpoints(const TrainConfig& c, MPI_Comm comm, const Dataset& train);

  // Collective: loads the newest valid checkpoint of --resume into `w`, `strategy`,
  // `trainer` and `stopper` and returns the epochs it completed (0 without --resume). Throws JobFailed
  // on every rank, listing the differences, for a checkpoint of another run.
  int resume(Weights& w, Strategy& strategy, Trainer& trainer, EarlyStop& stopper);

  // Collective: writes a checkpoint after `epoch` if one is due.
  void after_epoch(int epoch, const Weights& w, const Strategy& strategy, const Trainer& trainer,
                   const EarlyStop& stopper, double epoch_s);

 private:
  const TrainConfig config_;  // a copy, so that a caller may pass a temporary (the run's settled flags)
  MPI_Comm comm_;
  int rank_ = 0;
  std::string identity_;
  uint64_t data_id_ = 0;
  int every_ = 0;
  double last_ = 0;  // when the last checkpoint was written (rank 0's clock)
};

}  // namespace mpisgd
