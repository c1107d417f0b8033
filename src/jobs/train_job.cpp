#include "jobs/train_job.h"

#include <bit>
#include <cmath>
#include <cstdio>
#include <optional>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "comm/core_sharing.h"
#include "comm/extrema.h"
#include "comm/job_error.h"
#include "comm/node_facts.h"
#include "comm/output_paths.h"
#include "comm/simulation.h"
#include "comm/wait_board.h"
#include "data/csr_memory.h"
#include "data/feature_order.h"
#include "data/labels.h"
#include "data/load_dataset.h"
#include "device/device_columns.h"
#include "jobs/comm_bound_hint.h"
#include "jobs/run_checkpoints.h"
#include "model/model_file.h"
#include "model/model_memory.h"
#include "profile/profile_table.h"
#include "profile/profile_writer.h"
#include "sgd/batch_curvature.h"
#include "sgd/evaluate.h"
#include "strategies/strategy.h"

namespace mpisgd {
namespace {

// What the flags settle: the loss, the step's options (batch and lr once the data has
// set them) and how many ranks train.
struct Resolved {
  Loss loss;
  TrainOptions sgd;
  int workers = 0;
  bool adagrad() const { return sgd.schedule == Schedule::adagrad; }
};

// The rows a run trains and tests on, in the order the model keeps its features.
struct TrainingData {
  LoadedData train;
  LabelMap labels;  // classification only
  std::optional<Dataset> test;
  std::optional<FeatureOrder> order;  // none: the file's order
};

// Settings that are wrong are wrong on every rank alike, so they end the job directly.
Resolved resolve(const TrainConfig& c) {
  try {
    Resolved r{{loss_from_name(c.model)}, c.sgd, 0};
    r.sgd.schedule = schedule_from_name(c.lr_schedule);
    if (!c.multiclass.empty() && c.multiclass != "ovr" && c.multiclass != "softmax" &&
        c.multiclass != "crammer-singer")
      throw std::invalid_argument("--multiclass " + c.multiclass + ": ovr, softmax or crammer-singer");
    if (c.multiclass == "softmax" && r.loss.kind != LossKind::logistic)
      throw std::invalid_argument("--multiclass softmax is the multinomial logistic loss: it needs --model logreg "
                                  "(svm trains ovr or crammer-singer)");
    if (c.multiclass == "crammer-singer" && r.loss.kind != LossKind::hinge)
      throw std::invalid_argument("--multiclass crammer-singer is the multi-class hinge loss: it needs --model svm "
                                  "(logreg trains softmax or ovr)");
    if (c.sgd.epochs < 1) throw std::invalid_argument("--epochs must be at least 1");
    if (c.sgd.threads < 1) throw std::invalid_argument("--threads must be at least 1");
    if (c.sgd.device.gpu_id >= 0 && c.sgd.device.kind != DeviceKind::gpu)
      throw std::invalid_argument("--gpu-id " + std::to_string(c.sgd.device.gpu_id) + " is for --device gpu");
    if (kSimulated && c.sgd.threads > 1)
      throw std::invalid_argument("--threads " + std::to_string(c.sgd.threads) +
                                  ": a simulated rank runs one thread (SMPI times a rank's compute on one core)");
    if (kSimulated && c.comm_timeout > 0)
      throw std::invalid_argument(
          "--comm-timeout: a simulated rank has no watchdog thread, and simulated waits end or deadlock");
    if (!(c.sgd.lr >= 0)) throw std::invalid_argument("--lr must be positive");
    if (c.l2 < 0) throw std::invalid_argument("--l2 must be >= 0");
    if (c.stop.tol < 0) throw std::invalid_argument("--tol must be >= 0");
    if (c.stop.patience < 1) throw std::invalid_argument("--n-iter-no-change must be at least 1");
    if (c.checkpoint_every < 0) throw std::invalid_argument("--checkpoint-every must be at least 1");
    if (c.checkpoint_seconds < 0) throw std::invalid_argument("--checkpoint-seconds must be positive");
    if (c.checkpoint.empty() && (c.checkpoint_every > 0 || c.checkpoint_seconds > 0))
      throw std::invalid_argument("--checkpoint-every and --checkpoint-seconds need --checkpoint DIR");
    if (!c.profile.empty()) profile_is_json(c.profile);  // throws for a name of no known format
    return r;
  } catch (const std::invalid_argument& e) {
    throw JobFailed(e.what());
  }
}

// --batch and --lr: auto ones from the data's scale (sgd/step_defaults.h), logged either
// way, since the step is what a reader of the log needs to reproduce the run.
void settle_step(const TrainConfig& c, const Dataset& train, Resolved& r, MPI_Comm world) {
  StepRequest request;
  if (c.sgd.batch > 0) request.batch = c.sgd.batch;
  if (c.sgd.lr > 0) request.lr = c.sgd.lr;
  DataScale scale = measure_scale(train, world);
  ResolvedStep step = resolve_step(request, scale, r.workers, r.loss.kind, r.sgd.schedule);
  if (needs_curvature(request)) {
    scale.batch_curvature = batch_curvature(train, step.batch * static_cast<uint64_t>(r.workers), world);
    step = resolve_step(request, scale, r.workers, r.loss.kind, r.sgd.schedule);
  }
  r.sgd.batch = step.batch;
  r.sgd.lr = step.lr;
  r.sgd.adagrad_start = step.adagrad_start;
  spdlog::info("step: batch {}/worker (global {}{}), lr {:.6g}{}, schedule {}{}", step.batch,
               step.batch * static_cast<uint64_t>(r.workers), request.batch ? "" : ", auto", step.lr,
               request.lr ? "" : " (auto)", c.lr_schedule, step.why.empty() ? "" : ": " + step.why);
  if (r.sgd.lr * c.l2 >= 1)
    throw JobFailed(fmt::format("--l2 {} with lr {}: lr x l2 must stay below 1, or the L2 decay flips w's sign",
                                c.l2, r.sgd.lr));
}

void log_partition(const Dataset& d, const CountedComm& comm) {
  double mine[2] = {static_cast<double>(d.rows()), static_cast<double>(d.nnz())}, lo[2], hi[2], total[2];
  MPI_Reduce(mine, lo, 2, MPI_DOUBLE, MPI_MIN, 0, comm.raw());
  MPI_Reduce(mine, hi, 2, MPI_DOUBLE, MPI_MAX, 0, comm.raw());
  MPI_Reduce(mine, total, 2, MPI_DOUBLE, MPI_SUM, 0, comm.raw());
  if (comm.rank() != 0) return;  // the reductions' results are defined on the root only
  spdlog::info("{}: {} rows, {} non-zeros, N = {} features; rows per rank min/mean/max {}/{:.0f}/{}", d.path,
               static_cast<uint64_t>(total[0]), static_cast<uint64_t>(total[1]), d.dim, lo[0], total[0] / comm.size(),
               hi[0]);
}

// Renumbering copies rows mapped from a binary cache into memory of their own. A cache
// larger than that trains from its mapping, in the file's order: slower epochs rather
// than the OOM killer. Every rank renumbers or none, as their indices must agree.
bool renumbering_fits(const Dataset& train, const std::optional<Dataset>& test, MPI_Comm world) {
  auto copied = [](const Dataset& d) { return d.index.mapped() ? d.nnz() * (sizeof(uint32_t) + sizeof(float)) : 0; };
  const uint64_t need = copied(train) + (test ? copied(*test) : 0);
  const uint64_t available = available_memory();
  const auto ranks = static_cast<uint64_t>(ranks_on_node(world));
  const bool fits = need == 0 || available == 0 || need * ranks <= available;
  const bool all = min_over_ranks(world, fits ? 1 : 0) == 1;
  if (!all && !fits)
    spdlog::warn("features kept in the file's order: renumbering them by popularity would copy {:.1f} GiB of rows "
                 "mapped from the binary cache on each of this node's {} rank{}, more than its {:.1f} GiB available; "
                 "epochs take longer (docs/design.md#feature-order)",
                 static_cast<double>(need) / (1 << 30), ranks, ranks == 1 ? "" : "s",
                 static_cast<double>(available) / (1 << 30));
  return all;
}


// Phase 1, configure: what the flags alone decide, checked on every rank before any data
// is read, down to whether the outputs can be written.
Resolved configure(const TrainConfig& c, const CountedComm& comm) {
  Resolved r = resolve(c);
  check_output_paths(comm.raw(), {{"--save-model", c.save_model},
                                  {"--profile", c.profile},
                                  {"--checkpoint", c.checkpoint, OutputPath::directory}});
  try {
    check_strategy(c.strategy, c.strategy_flags, comm.size());
    if (c.sgd.slow_rank >= comm.size())
      throw std::invalid_argument("--slow-rank " + std::to_string(c.sgd.slow_rank) + ": the job has ranks 0 to " +
                                  std::to_string(comm.size() - 1));
  } catch (const std::invalid_argument& e) {
    throw JobFailed(e.what());
  }
  r.workers = find_strategy(c.strategy).family.training_ranks(c.strategy_flags, comm.size());
  spdlog::info("train: model={} strategy={} epochs={} (at most{}) l2={} P={} T={} seed={}", c.model, c.strategy,
               r.sgd.epochs, c.stop.enabled ? ", stopping early" : "", c.l2, comm.size(), r.sgd.threads, r.sgd.seed);
  if (r.sgd.threads > 1) {
    const int cpus = fewest_cpus(comm.raw());
    if (cpus < r.sgd.threads && comm.rank() == 0)
      spdlog::warn("--threads {} but a rank may run on only {} CPU{} (its affinity mask), so its threads share "
                   "cores; launch with `mpirun --bind-to none`, or `--map-by slot:PE={}` (Open MPI)",
                   r.sgd.threads, cpus, cpus == 1 ? "" : "s", r.sgd.threads);
  }
  return r;
}

// Phase 2, load: the training rows (on the ranks that train), their labels, the test
// rows, the model's memory checked against the node's, and the features renumbered.
TrainingData load(const TrainConfig& c, const Resolved& r, const CountedComm& comm) {
  MPI_Comm world = comm.raw();
  const double load_start = MPI_Wtime();
  const LoadOptions options{.zero_based = c.zero_based, .dim = c.dim, .max_memory = parse_max_memory(c.max_memory)};
  LoadOptions train_options = options;
  train_options.readers = r.workers;  // parameter servers hold no rows
  TrainingData d{load_dataset(c.data, world, train_options), {}, {}, {}};
  if (r.loss.classification()) {
    d.labels = agree_on_labels(c.data, d.train.first_labels, world);
    log_classes(c.data, d.labels, to_training_labels(d.train.data, d.labels), world);
  }
  if (!c.test.empty()) d.test = load_dataset(c.test, world, options).data;
  spdlog::info("loaded in {:.3f} s", MPI_Wtime() - load_start);
  log_partition(d.train.data, comm);
  if (d.test) log_partition(*d.test, comm);
  if (d.test && r.loss.classification()) warn_unseen_labels(c.test, *d.test, d.labels, world);
  const uint64_t weights = uint64_t{d.train.data.dim} * d.labels.columns();
  if (weights > UINT32_MAX)
    throw JobFailed(fmt::format("{}: N = {} features x {} classes = {} weights, more than the {} that 32-bit "
                                "indices address; cap N with --dim",
                                c.data, d.train.data.dim, d.labels.columns(), weights, UINT32_MAX));
  check_model_memory(world, weights, r.adagrad(), d.train.dim_origin);
  if (c.feature_order == "popularity" && renumbering_fits(d.train.data, d.test, world)) {
    const double start = MPI_Wtime();
    d.order = FeatureOrder::by_popularity(d.train.data, world);
    d.order->apply(d.train.data, r.sgd.threads);
    if (d.test) d.order->apply(*d.test, r.sgd.threads);
    spdlog::info("features renumbered by popularity in {:.3f} s", MPI_Wtime() - start);
  }
  return d;
}

// Phase 3, build the strategy, from the flags of its family and the settled step.
std::unique_ptr<Strategy> build_strategy(const TrainConfig& c, const Resolved& r, const Dataset& train,
                                         CountedComm& comm) {
  try {
    const StepRules step{.l2 = c.l2,
                         .adagrad = r.adagrad(),
                         .adagrad_start = r.sgd.adagrad_start,
                         .threads = r.sgd.threads,
                         .batch = r.sgd.batch,
                         .seed = r.sgd.seed};
    return make_strategy(c.strategy, StrategyContext{comm, train.dim * r.loss.columns, c.strategy_flags, step,
                                                     &train, r.loss.columns});
  } catch (const std::invalid_argument& e) {
    throw JobFailed(e.what());
  }
}

// Checkpoints record the step this run resolved, and the feature order it used (a cache
// too large to copy keeps the file's), so a resume refuses another one.
TrainConfig as_settled(const TrainConfig& c, const Resolved& r, const TrainingData& d) {
  TrainConfig settled = c;
  settled.sgd = r.sgd;
  settled.multiclass = r.loss.columns > 1 ? multiclass_name(r.loss.multiclass) : "";
  settled.feature_order = d.order ? "popularity" : "file";
  return settled;
}

// The profile's columns past the common ones: the strategy's, then the GPU path's.
std::vector<std::string> profile_columns(const Strategy& strategy, const Resolved& r) {
  std::vector<std::string> columns = strategy.profile_columns();
  if (r.sgd.device.kind == DeviceKind::gpu)
    for (std::string& name : device_profile_columns()) columns.push_back(std::move(name));
  return columns;
}

// The end of an epoch in the loop: its summary on rank 0's table and profile, the test
// set's loss and accuracy, and the early stop's decision, alike on every rank. Returns
// the summary, complete on rank 0.
EpochSummary end_epoch(int epoch, const EpochRecord& record, const Resolved& r, const TrainingData& d,
                       const Weights& w, Strategy& strategy, std::optional<ProfileWriter>& profile,
                       EarlyStop& stopper, const CountedComm& comm) {
  MPI_Comm world = comm.raw();
  EpochSummary summary = [&] {
    WaitScope waiting("the epoch-end summary");
    EpochSummary s = summarize_epoch(epoch, record, world);
    s.strategy = strategy.epoch_columns(world);
    if (r.sgd.device.kind == DeviceKind::gpu) {
      const StrategyColumns device = device_epoch_columns(record.device, world);
      s.strategy.cells.insert(s.strategy.cells.end(), device.cells.begin(), device.cells.end());
      s.strategy.table_line += (s.strategy.table_line.empty() ? "" : "\n") + device.table_line;
    }
    // The loss is reduced onto rank 0 only; every rank decides from the same bits.
    MPI_Bcast(&s.train_loss, 1, MPI_DOUBLE, 0, world);
    return s;
  }();
  if (d.test)
    summary.test = evaluate(*d.test, r.loss, d.labels, r.sgd.threads, world, [&w](auto index, auto value, auto m) {
                     w.margins_known(index, value, m);
                   }).result;
  if (comm.rank() == 0) print_profile_row(stdout, summary);
  if (profile) profile->write(summary);  // in memory until commit(): nothing to agree on
  const double loss = summary.train_loss;  // rank 0's bits on every rank
  if (stopper.after_epoch(loss) && comm.rank() == 0)
    spdlog::info("stopped after epoch {} of at most {}: {}", epoch, r.sgd.epochs, stopper.reason());
  if (!std::isfinite(loss) && comm.rank() == 0)
    spdlog::warn("epoch {}: the training loss is {}: the step diverged; give a smaller --lr", epoch, loss);
  return summary;
}

// Phase 5, finish: the ranks' models checked to be one, then the model and the profile
// written.
void finish(const TrainConfig& c, const Resolved& r, const TrainingData& d, const Weights& w,
            std::optional<ProfileWriter>& profile, const CountedComm& comm) {
  MPI_Comm world = comm.raw();
  // Every rank applied the same combined updates in the same order: the bits must agree.
  const uint64_t h = w.hash();
  const auto bits = std::bit_cast<int64_t>(h);
  const bool same = [&] {
    WaitScope waiting("the model-hash check");
    return min_over_ranks(world, bits) == max_over_ranks(world, bits);
  }();
  if (!same) throw JobFailed("ranks hold different models after training (model hashes differ): this is a bug");
  spdlog::info("model hash {:016x} identical on all {} ranks", h, comm.size());

  if (!c.save_model.empty())
    run_on_root(world, 0, [&] {
      std::vector<double> values = d.order ? d.order->to_file_order(w.values()) : w.values();
      save_model(c.save_model, LinearModel{r.loss.classification(), r.loss.kind, d.labels, -1, std::move(values),
                                           r.loss.multiclass});
      spdlog::info("model written to {}", c.save_model);
    });
  if (!c.profile.empty()) run_on_root(world, 0, [&] {
      profile->commit();
      spdlog::info("profile written to {}", c.profile);
    });
}

}  // namespace

void run_train(const TrainConfig& c, MPI_Comm world) {
  const double start = MPI_Wtime();
  CountedComm comm(world);
  Resolved r = configure(c, comm);
  TrainingData data = load(c, r, comm);
  if (r.loss.classification()) {
    r.loss.columns = data.labels.columns();
    r.loss.multiclass = c.multiclass.empty() ? (r.loss.kind == LossKind::logistic ? Multiclass::softmax : Multiclass::ovr)
                                             : multiclass_from_name(c.multiclass);
    if (r.loss.columns > 1)
      spdlog::info("multiclass: {}{}", multiclass_name(r.loss.multiclass),
                   c.multiclass.empty() ? " (the default for " + c.model + ")" : "");
  }
  settle_step(c, data.train.data, r, world);

  // Where the strategy takes the steps elsewhere, a rank's weights take no step rules.
  const bool steps = find_strategy(c.strategy).family.takes_steps();
  Weights w(data.train.data.dim * r.loss.columns, steps ? c.l2 : 0, r.adagrad() && steps, r.sgd.threads,
            static_cast<float>(r.sgd.adagrad_start));
  std::unique_ptr<Strategy> strategy = build_strategy(c, r, data.train.data, comm);
  Trainer trainer(data.train.data, r.loss, w, *strategy, comm, r.sgd);
  spdlog::info("{} steps per epoch", trainer.steps_per_epoch());

  // Phase 4, the epoch loop, from where a checkpoint left off.
  RunCheckpoints checkpoints(as_settled(c, r, data), world, data.train.data);
  EarlyStop stopper(c.stop);
  const int done = checkpoints.resume(w, *strategy, trainer, stopper);
  if (stopper.stopped() && comm.rank() == 0)
    spdlog::info("the resumed run had stopped early after epoch {}: {}", done, stopper.reason());
  std::optional<ProfileWriter> profile;
  if (!c.profile.empty())
    run_on_root(world, 0, [&] {
      profile.emplace(c.profile, RunInfo{c.strategy, c.model, r.sgd.threads, w.dim(), r.loss.classification(),
                                         profile_columns(*strategy, r)});
    });
  // What a user waits for before the first step, beyond the load: time to accuracy counts it.
  spdlog::info("set up in {:.3f} s (loading, feature order, step and strategy start-up{})", MPI_Wtime() - start,
               done > 0 ? ", checkpoint" : "");
  if (comm.rank() == 0) print_profile_header(stdout, r.loss.classification());
  for (int epoch = done + 1; epoch <= r.sgd.epochs && !stopper.stopped(); ++epoch) {
    const EpochRecord record = trainer.run_epoch(epoch);
    const EpochSummary summary = end_epoch(epoch, record, r, data, w, *strategy, profile, stopper, comm);
    if (epoch == done + 1) log_comm_bound_hint(summary, c.strategy, strategy->summing() != nullptr, world);
    checkpoints.after_epoch(epoch, w, *strategy, trainer, stopper, record.wall_s);
  }

  finish(c, r, data, w, profile, comm);
}

}  // namespace mpisgd
