#include "jobs/run_checkpoints.h"

#include <filesystem>
#include <optional>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "checkpoint/checkpoint_io.h"
#include "checkpoint/data_identity.h"
#include "comm/job_error.h"
#include "comm/state_blob.h"
#include "comm/wait_board.h"
#include "jobs/run_identity.h"

namespace mpisgd {

RunCheckpoints::RunCheckpoints(const TrainConfig& c, MPI_Comm comm, const Dataset& train)
    : config_(c), comm_(comm) {
  if (c.checkpoint.empty() && c.resume.empty()) return;
  MPI_Comm_rank(comm, &rank_);
  int size = 1;
  MPI_Comm_size(comm, &size);
  identity_ = run_identity(c, size, train.dim);
  data_id_ = data_identity(train, comm);
  every_ = c.checkpoint_every > 0 ? c.checkpoint_every : (c.checkpoint_seconds > 0 ? 0 : 1);
  if (!c.checkpoint.empty())
    run_on_root(comm, 0, [&] {
      std::error_code ec;
      std::filesystem::create_directories(c.checkpoint, ec);
      if (ec || !std::filesystem::is_directory(c.checkpoint))
        throw std::runtime_error("--checkpoint " + c.checkpoint + ": cannot create the directory" +
                                 (ec ? ": " + ec.message() : ""));
    });
  last_ = MPI_Wtime();
}

int RunCheckpoints::resume(Weights& w, Strategy& strategy, Trainer& trainer, EarlyStop& stopper) {
  if (config_.resume.empty()) return 0;
  ResumePoint p = load_checkpoint(comm_, config_.resume);
  const Checkpoint& c = p.checkpoint;
  std::vector<std::string> other_device;
  std::vector<std::string> differences = identity_differences(c.config, identity_, &other_device);
  if (c.data_id != data_id_)
    differences.push_back(fmt::format("data: checkpoint's rows have identity {:016x}, this run's {:016x}", c.data_id,
                                      data_id_));
  if (!differences.empty())
    throw JobFailed(fmt::format("cannot resume from {}, made by another run: {} (a resume may change only --epochs, "
                                "the early-stopping flags, --test, --profile, --save-model, --max-memory, --device, "
                                "the data's path, logging and checkpoint flags)",
                                p.path, fmt::join(differences, "; ")));
  if (c.step != static_cast<uint64_t>(c.epoch) * trainer.steps_per_epoch())
    throw JobFailed(fmt::format("cannot resume from {}: it took {} steps in {} epochs, this run takes {} per epoch",
                                p.path, c.step, c.epoch, trainer.steps_per_epoch()));
  std::optional<LocalFailure> failure;
  try {
    StateReader model(c.weights);
    w.load_state(model);
    model.expect_end();
    StateReader mine(p.mine);
    strategy.load_state(mine);
    mine.expect_end();
    StateReader run(c.run);
    stopper.load_state(run);
    run.expect_end();
  } catch (const std::runtime_error& e) {
    failure = LocalFailure{0, p.path + ": " + e.what()};
  }
  agree_on_error(comm_, failure);
  trainer.resume_after(c.epoch);
  if (rank_ == 0) {
    spdlog::info("resumed from {}: {} epochs, {} steps done", p.path, c.epoch, c.step);
    if (!other_device.empty())
      spdlog::warn("resuming on another device ({}): the model goes on from the checkpoint's bits with this "
                   "device's rounding, so it matches the uninterrupted run to rounding, not bit for bit",
                   fmt::join(other_device, "; "));
    if (c.epoch >= config_.sgd.epochs)
      spdlog::warn("the checkpoint already has {} epochs: --epochs {} trains no more", c.epoch, config_.sgd.epochs);
  }
  return c.epoch;
}

void RunCheckpoints::after_epoch(int epoch, const Weights& w, const Strategy& strategy, const Trainer& trainer,
                                 const EarlyStop& stopper, double epoch_s) {
  if (config_.checkpoint.empty()) return;
  int due = (every_ > 0 && epoch % every_ == 0) ||
            (config_.checkpoint_seconds > 0 && MPI_Wtime() - last_ >= config_.checkpoint_seconds);
  {
    WaitScope waiting("the checkpoint decision");
    MPI_Bcast(&due, 1, MPI_INT, 0, comm_);
  }
  if (!due) return;
  const double start = MPI_Wtime();
  Checkpoint c{identity_, data_id_, epoch, trainer.steps_taken(), {}, {}, {}};
  if (rank_ == 0) {
    StateWriter model;
    w.save_state(model);
    c.weights = model.take();
    StateWriter run;
    stopper.save_state(run);
    c.run = run.take();
  }
  StateWriter mine;
  strategy.save_state(mine);
  const std::string path = save_checkpoint(comm_, config_.checkpoint, std::move(c), mine.take());
  last_ = MPI_Wtime();
  if (rank_ == 0)
    spdlog::info("checkpoint {} written in {:.3f} s (the epoch took {:.3f} s)", path, last_ - start, epoch_s);
}

}  // namespace mpisgd
