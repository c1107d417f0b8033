#include "sgd/trainer.h"

#include <algorithm>
#include <chrono>
#include <numeric>
#include <thread>

#include <spdlog/spdlog.h>

#include "comm/extrema.h"
#include "profile/progress_line.h"
#include "sgd/shuffle.h"

namespace mpisgd {

Trainer::Trainer(const Dataset& train, Loss loss, Weights& w, Strategy& strategy, CountedComm& comm,
                 const TrainOptions& o)
    : train_(train), loss_(loss), w_(w), strategy_(strategy), comm_(comm), options_(o), order_(train.rows()),
      gradient_(make_batch_device(o.device, train, w.dim(), o.threads, o.batch, loss.columns,
                                  strategy.role() == Strategy::Role::train, strategy.summing() != nullptr,
                                  comm.raw())) {
  local_steps_ = (train.rows() + o.batch - 1) / o.batch;
  steps_per_epoch_ = static_cast<uint64_t>(max_over_ranks(comm.raw(), static_cast<int64_t>(local_steps_)));
  const int trains = strategy.role() == Strategy::Role::train ? 1 : 0;
  MPI_Allreduce(&trains, &training_ranks_, 1, MPI_INT, MPI_SUM, comm.raw());
  summing_ = gradient_->can_hold_model() ? strategy.summing() : nullptr;
  if (summing_) summing_->select_on(*gradient_);
  if (options_.device.kind == DeviceKind::gpu && comm.rank() == 0)
    spdlog::info(summing_ ? "--device gpu: the model lives on the device during an epoch; the strategy's sum goes up "
                            "to it for each step"
                          : "--device gpu: the model stays on the host, where this strategy steps it itself; each "
                            "batch's weights go up to the device");
}

EpochRecord Trainer::run_epoch(int epoch) {
  EpochRecord rec;
  strategy_.before_epoch(epoch);
  const bool serves = strategy_.role() == Strategy::Role::serve;
  if (!serves) {
    std::iota(order_.begin(), order_.end(), uint64_t{0});
    shuffle_rows(order_, options_.seed, comm_.rank(), epoch);
  }
  const CommStats comm_start = comm_.stats();
  const DeviceRecord device_start = gradient_->traffic();
  const double start = MPI_Wtime();
  if (serves) {
    strategy_.serve(epoch);
  } else {
    if (summing_) gradient_->take_model(w_);
    train_steps(epoch, rec);
    if (summing_) gradient_->give_model(w_);
  }
  strategy_.after_epoch(epoch, w_);

  rec.wall_s = MPI_Wtime() - start;
  CommStats used = comm_.stats() - comm_start;
  rec.comm_s = used.seconds;
  rec.bytes_sent = static_cast<double>(used.bytes_sent);
  rec.bytes_received = static_cast<double>(used.bytes_received);
  rec.steps = static_cast<double>(steps_per_epoch_);
  rec.device = gradient_->traffic() - device_start;
  strategy_.add_to_record(rec);
  step_ += steps_per_epoch_;
  return rec;
}

void Trainer::train_steps(int epoch, EpochRecord& rec) {
  const int ranks_in_step = strategy_.steps_alone() ? 1 : training_ranks_;
  const float scale = static_cast<float>(1.0 / (static_cast<double>(options_.batch) * ranks_in_step));
  ProgressLine progress(options_.progress && comm_.rank() == 0, epoch, training_ranks_);
  const bool lockstep = strategy_.lockstep();
  double density_sum = 0;
  uint64_t s = 0;
  for (; lockstep ? s < steps_per_epoch_ : strategy_.another_step(s, local_steps_); ++s) {
    const uint64_t in_pass = local_steps_ ? s % local_steps_ : s;
    if (!lockstep && s > 0 && in_pass == 0) shuffle_rows(order_, options_.seed, comm_.rank(), epoch);
    size_t begin = std::min<size_t>(in_pass * options_.batch, order_.size());
    size_t end = std::min<size_t>(begin + options_.batch, order_.size());
    std::span<const uint64_t> batch(order_.data() + begin, end - begin);

    const double t0 = MPI_Wtime();
    const double comm_before = comm_.stats().seconds;
    strategy_.refresh(train_, batch, w_);
    const double eta = learning_rate(options_.schedule, options_.lr, step_ + s, steps_per_epoch_);
    BatchLoss bl;
    uint64_t nnz = 0;
    if (strategy_.passes_through()) {
      bl = gradient_->compute_and_step(train_, batch, w_, loss_, scale, eta);
      nnz = bl.nnz;
    } else if (summing_) {
      bl = gradient_->compute(train_, batch, w_, loss_, scale, update_);
      nnz = gradient_->step(summing_->combine(update_), eta);
    } else {
      bl = gradient_->compute(train_, batch, w_, loss_, scale, update_);
      nnz = strategy_.exchange(update_, eta, w_);
    }
    straggle(t0);
    // The strategy's own work (a pull's bookkeeping, a model average's, packing, applying
    // the step) counts as compute.
    rec.compute_s += (MPI_Wtime() - t0) - (comm_.stats().seconds - comm_before);
    density_sum += static_cast<double>(nnz) / std::max<uint32_t>(1, w_.dim());
    rec.loss_sum += bl.loss_sum;
    rec.rows += static_cast<double>(bl.rows);
    progress.update(static_cast<uint64_t>(rec.rows), rec.loss_sum);
  }
  progress.finish();
  rec.density = s ? density_sum / static_cast<double>(s) : 0;
}

void Trainer::straggle(double since) const {
  if (comm_.rank() != options_.slow_rank) return;
  const double extra = (options_.slow_factor - 1) * (MPI_Wtime() - since);
  std::this_thread::sleep_for(std::chrono::duration<double>(extra));
}

}  // namespace mpisgd
