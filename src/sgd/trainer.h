#pragma once
// The epoch loop of data-parallel mini-batch SGD (thesis Algorithm 1, MPI-SGD semantics):
// each rank shuffles its own rows and takes B of them per step, so the global batch is
// B x P. Every rank makes the same number of steps per epoch, ceil(max rows / B), and a
// rank that has run out of rows still takes part with an empty update: collectives need
// every rank. The step is w <- w - eta_t * (1 / (B P)) sum of the batch's gradients, the
// mean over the nominal global batch, so eta does not have to change with P; where each
// rank steps alone between model averages (Strategy::steps_alone, local SGD) the mean is
// over its own batch, 1 / B.
// Under a parameter server only the W workers train (P counts them alone) and the server
// ranks serve instead (Strategy::Role); an asynchronous strategy lets each worker take
// as many steps as it asks for (Strategy::lockstep, another_step), going round its own
// rows again when it needs more, the learning rate still following the step's number in
// the epoch.
#include <cstdint>
#include <memory>
#include <vector>

#include "comm/counted_comm.h"
#include "data/dataset.h"
#include "device/make_batch_device.h"
#include "model/loss.h"
#include "model/weights.h"
#include "profile/epoch_profile.h"
#include "sgd/lr_schedule.h"
#include "strategies/strategy.h"

namespace mpisgd {

struct TrainOptions {
  int epochs = 10;
  uint64_t batch = 1000;
  double lr = 0.5;
  Schedule schedule = Schedule::constant;
  double adagrad_start = 0;  // AdaGrad: the value its sums start at (sgd/step_defaults.h)
  int threads = 1;
  uint64_t seed = 1;
  bool progress = true;
  // Benchmark aid (--slow-rank R:F): rank R's steps take F times as long, as on a node F
  // times slower, to measure what a straggler costs each strategy. The sleep counts as
  // compute in the profile.
  int slow_rank = -1;
  double slow_factor = 1;
  DeviceChoice device{};  // where the batch gradients are computed (--device, --gpu-id)
};

class Trainer {
 public:
  // Collective (agrees on the number of steps per epoch).
  Trainer(const Dataset& train, Loss loss, Weights& w, Strategy& strategy, CountedComm& comm, const TrainOptions& o);

  EpochRecord run_epoch(int epoch);
  uint64_t steps_per_epoch() const { return steps_per_epoch_; }
  // Global steps taken so far (the learning-rate schedule's clock).
  uint64_t steps_taken() const { return step_; }
  // Continues a run that stopped after `epochs` whole epochs: the schedule resumes its
  // clock there; shuffles need nothing, as they are seeded by (seed, rank, epoch).
  void resume_after(int epochs) { step_ = static_cast<uint64_t>(epochs) * steps_per_epoch_; }

 private:
  void train_steps(int epoch, EpochRecord& rec);
  // --slow-rank: on that rank, sleeps F - 1 times the step's duration since `since`.
  void straggle(double since) const;

  const Dataset& train_;
  Loss loss_;
  Weights& w_;
  Strategy& strategy_;
  CountedComm& comm_;
  TrainOptions options_;
  uint64_t steps_per_epoch_ = 0;
  uint64_t local_steps_ = 0;
  int training_ranks_ = 0;
  uint64_t step_ = 0;  // steps of the epochs before this one
  std::vector<uint64_t> order_;
  std::unique_ptr<BatchDevice> gradient_;
  // The strategy, where the device holds the model through each epoch and takes the
  // strategy's steps (BatchDevice::take_model); null where the host's model is stepped.
  SummingStrategy* summing_ = nullptr;
  Stream<float> update_;
};

}  // namespace mpisgd
