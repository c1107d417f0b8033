// mpisgd: distributed SGD for sparse linear models. Run under mpirun; see README.md.
//   mpisgd train    --data F [--test F] --model logreg|svm|linreg --strategy NAME ...
//   mpisgd predict  --model m.txt --data F [--out preds.txt]
//   mpisgd convert  --data F --out F.bin
#include <cmath>
#include <cstdlib>
#include <type_traits>

#include <CLI/CLI.hpp>
#include <mpi.h>
#include <spdlog/spdlog.h>

#include "comm/job_error.h"
#include "comm/log.h"
#include "comm/temp_files.h"
#include "comm/thread_level.h"
#include "comm/watchdog.h"
#include "data/convert_job.h"
#include "model/predict_job.h"
#include "sgd/train_job.h"
#include "sparse/topk_select.h"
#include "strategies/strategy.h"

namespace {

std::string strategy_help() {
  std::string help = "how ranks combine their updates:";
  for (const auto& s : mpisgd::strategy_registry()) help += "\n  " + s.name + ": " + s.summary;
  return help;
}

std::vector<std::string> selection_names() {
  const auto names = mpisgd::topk_selector_names();
  return {names.begin(), names.end()};
}

std::vector<std::string> strategy_names() {
  std::vector<std::string> names;
  for (const auto& s : mpisgd::strategy_registry()) names.push_back(s.name);
  return names;
}

// `auto` (stored as 0, resolved from the data at start) or a positive number.
template <class T>
T auto_or(const std::string& flag, const std::string& v) {
  if (v == "auto") return 0;
  char* end = nullptr;
  const double x = std::strtod(v.c_str(), &end);
  if (end == v.c_str() || *end != '\0' || !(x > 0) || !std::isfinite(x) ||
      (std::is_integral_v<T> && (x != std::floor(x) || x > 1e15)))
    throw CLI::ValidationError(flag, "'" + v + "': give auto or a positive " +
                                         (std::is_integral_v<T> ? "whole number" : "number"));
  return static_cast<T>(x);
}

void add_logging(CLI::App* cmd, std::string& log_level) {
  cmd->add_option("--log-level", log_level, "trace|debug|info|warn|error|off (rank 0; other ranks warn)")
      ->check(CLI::IsMember({"trace", "debug", "info", "warn", "error", "off"}));
}

}  // namespace

int main(int argc, char** argv) {
  // OpenMP threads compute; only the main thread calls MPI, except the watchdog, which
  // asks its peers only where MPI_THREAD_MULTIPLE is granted (comm/watchdog.h).
  if (!mpisgd::init_mpi(argc, argv, MPI_THREAD_FUNNELED, MPI_THREAD_MULTIPLE)) return 1;
  mpisgd::install_temp_file_cleanup();
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);

  CLI::App app{"mpisgd: data-parallel SGD for sparse linear models over MPI"};
  app.require_subcommand(1);
  // CLI11 reads config files for the main app only; fallthrough lets `--config` follow the
  // subcommand, and the file names the subcommand as its section ([train], [predict]).
  app.set_config("--config", "", "read flags from a TOML/INI file with a [train], [predict] or [convert] section");
  app.fallthrough();
  std::string log_level = "info";

  mpisgd::TrainConfig train;
  auto* t = app.add_subcommand("train", "train a model with mini-batch SGD on all ranks");
  t->footer("--config FILE reads these flags from a TOML/INI file, under a [train] section.");
  add_logging(t, log_level);
  t->add_option("--data", train.data, "training set: LIBSVM text or binary cache")->required();
  t->add_option("--test", train.test, "test set, evaluated after every epoch");
  t->add_option("--model", train.model, "logreg (logistic loss), svm (hinge), linreg (squared)")
      ->check(CLI::IsMember({"logreg", "svm", "linreg"}))
      ->capture_default_str();
  t->add_option("--strategy", train.strategy, strategy_help())->check(CLI::IsMember(strategy_names()))->capture_default_str();
  t->add_option("--group-size", train.collective.group_size,
                "dsar-early: ranks per group that go dense together (a divisor of P is used)")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  t->add_option("--dense-switch", train.collective.dense_switch.density,
                "sparse strategies: density past which a stream is sent and summed dense (default: derived from "
                "the network and summation speed measured at start-up)")
      ->check(CLI::Range(0.0, 1.0))
      ->each([&](const std::string&) { train.collective.tune_dense_switch = false; });
  t->add_option("--density", train.sparsify.density,
                "top-k: each rank sends k = ceil(D x N) values of its update, keeping the rest as a residual "
                "(default for top-k strategies 0.01; sparse strategies stay lossless without it)")
      ->check(CLI::Range(0.0, 1.0));
  t->add_option("--k", train.sparsify.k, "top-k: values each rank sends per step (instead of --density)")
      ->check(CLI::PositiveNumber);
  t->add_option("--select", train.sparsify.select,
                "top-k selection: exact | approx | threshold-reuse | gaussian | sampled (default threshold-reuse)")
      ->check(CLI::IsMember(selection_names()));
  t->add_option("--reuse-period", train.sparsify.reuse_period,
                "threshold-reuse and Ok-Topk: steps between exact thresholds, reused in between")
      ->check(CLI::PositiveNumber)
      ->each([&](const std::string&) { train.topk.reuse_period = train.sparsify.reuse_period; })
      ->capture_default_str();
  t->add_option("--repartition-period", train.topk.repartition_period,
                "oktopk: steps between recomputing the regions that balance the ranks' top-k")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  t->add_option("--warmup-steps", train.sparsify.warmup_steps,
                "top-k: steps that send the whole update before sparsifying")
      ->capture_default_str();
  t->add_option_function<std::string>(
       "--servers",
       [&train](const std::string& v) {
         train.ps.colocated = v == "colocated";
         if (train.ps.colocated) return;
         char* end = nullptr;
         const long n = std::strtol(v.c_str(), &end, 10);
         if (end == v.c_str() || *end != '\0' || n < 1 || n > 1'000'000)
           throw CLI::ValidationError("--servers", "'" + v + "': give colocated or a positive number of server ranks");
         train.ps.servers = static_cast<int>(n);
       },
       "ps-sync, ps-async: the last S ranks serve shards of the model and train nothing (default 1); colocated: "
       "every rank trains and serves 1/P of the model on a second thread (needs MPI_THREAD_MULTIPLE)");
  t->add_option("--max-staleness", train.ps.max_staleness,
                "ps-async: a worker runs at most K steps ahead of the slowest (0 waits as ps-sync; default unbounded)")
      ->check(CLI::NonNegativeNumber);
  t->add_option("--drop-rate", train.ps.drop_rate,
                "ps-sync, ps-async: pushes and pulls carry only the largest 1 - R of each update, the rest kept as "
                "residuals (gradient dropping; 0 sends everything)")
      ->capture_default_str();
  CLI::Option* overlap = t->add_flag("--overlap", train.ps.overlap,
                                     "ps-sync, ps-async: a thread pushes and pulls while the worker computes the next "
                                     "batches on the values it has (needs MPI_THREAD_MULTIPLE)");
  t->add_option("--max-overlap-steps", train.ps.max_overlap_steps,
                "--overlap: steps a worker computes while an exchange is in flight (0: none, as without --overlap)")
      ->check(CLI::NonNegativeNumber)
      ->needs(overlap)
      ->capture_default_str();
  t->add_option("--epochs", train.sgd.epochs, "most passes over the data (fewer when training stops early)")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  t->add_option_function<std::string>(
       "--batch", [&train](const std::string& v) { train.sgd.batch = auto_or<uint64_t>("--batch", v); },
       "rows per worker per step (global batch = batch x workers); auto: a global batch of about 100 rows, "
       "smaller where an epoch would take fewer than 200 steps")
      ->default_str("auto");
  t->add_option_function<std::string>(
       "--lr", [&train](const std::string& v) { train.sgd.lr = auto_or<double>("--lr", v); },
       "learning rate eta; auto: global batch / mean ||x||^2 of the training rows (x 0.25 for linreg), at most "
       "20 / the largest curvature of a batch (1 / it for linreg); 0.5 for adagrad; logged at start")
      ->default_str("auto");
  t->add_option("--tol", train.stop.tol,
                "stop early once the training loss has not improved by TOL for --n-iter-no-change epochs")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  t->add_option("--n-iter-no-change", train.stop.patience, "epochs without improvement before stopping early")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  t->add_flag("!--no-early-stop", train.stop.enabled, "train all --epochs");
  t->add_option("--lr-schedule", train.lr_schedule, "constant | invscaling (eta/sqrt(1+epochs done)) | adagrad")
      ->check(CLI::IsMember({"constant", "invscaling", "adagrad"}))
      ->capture_default_str();
  t->add_option("--l2", train.l2, "L2 regularisation lambda (objective + lambda/2 ||w||^2)")->capture_default_str();
  t->add_option("--threads", train.sgd.threads, "OpenMP threads per rank for the gradient")->capture_default_str();
  t->add_option("--seed", train.sgd.seed, "shuffling seed")->capture_default_str();
  t->add_option("--profile", train.profile, "per-epoch profile: .csv or .jsonl");
  t->add_option("--save-model", train.save_model, "write the model in LIBLINEAR's format");
  t->add_option("--dim", train.dim, "number of features (default: the largest index)");
  t->add_flag("--zero-based", train.zero_based, "the files use 0-based indices");
  t->add_option("--feature-order", train.feature_order,
                "popularity (the model keeps frequent features together in memory; the model file "
                "keeps the file's numbering) or file (the file's numbering)")
      ->check(CLI::IsMember({"popularity", "file"}))
      ->capture_default_str();
  t->add_option("--max-memory", train.max_memory, "most a rank may allocate for its rows: 512M, 8G, 0 (no check), auto (the node's available memory / its ranks)");
  t->add_flag("!--no-progress", train.sgd.progress, "no running progress line on the terminal");
  const CLI::Validator positive(
      [](std::string& v) {
        const double x = std::strtod(v.c_str(), nullptr);
        return x > 0 && std::isfinite(x) ? std::string() : "must be positive";
      },
      "> 0");
  t->add_option("--checkpoint", train.checkpoint, "write a checkpoint into DIR at epoch ends (the last two kept)");
  t->add_option("--checkpoint-every", train.checkpoint_every, "checkpoint every K epochs (default 1 unless --checkpoint-seconds is given)")
      ->check(positive);
  t->add_option("--checkpoint-seconds", train.checkpoint_seconds, "checkpoint at the first epoch end S seconds after the last checkpoint (checked at epoch ends only)")
      ->check(positive);
  t->add_option("--resume", train.resume, "continue from the newest valid checkpoint in DIR (same P, T, strategy, model, data and step settings)");

  t->add_option("--comm-timeout", train.comm_timeout,
                 "end the job when a rank waits in one exchange longer than S seconds, naming the ranks that "
                 "did not answer (0: wait forever)")
      ->check(CLI::Validator(
          [](std::string& v) {
            const double s = std::strtod(v.c_str(), nullptr);
            return s >= 0 && s <= 1e6 ? std::string() : "must be seconds from 0 (off) to 1e6";
          },
          "SECONDS"))
      ->capture_default_str();
  t->add_option_function<std::string>(
       "--slow-rank",
       [&train](const std::string& v) {
         const auto colon = v.find(':');
         char* end = nullptr;
         const long rank = std::strtol(v.c_str(), &end, 10);
         const double factor = colon == std::string::npos ? 0 : std::strtod(v.c_str() + colon + 1, nullptr);
         if (colon == std::string::npos || end != v.c_str() + colon || rank < 0 || !(factor >= 1 && factor <= 1000))
           throw CLI::ValidationError("--slow-rank", "'" + v + "': give RANK:FACTOR, e.g. 1:2 (a factor from 1 to 1000)");
         train.sgd.slow_rank = static_cast<int>(rank);
         train.sgd.slow_factor = factor;
       },
       "benchmark aid: rank R's steps take F times as long (R:F), to measure a straggler's cost")
      ->type_name("R:F");

  mpisgd::PredictConfig predict;
  auto* p = app.add_subcommand("predict", "accuracy or RMSE of a saved model on a dataset");
  p->footer("--config FILE reads these flags from a TOML/INI file, under a [predict] section.");
  add_logging(p, log_level);
  p->add_option("--model", predict.model, "model file (ours or LIBLINEAR's)")->required();
  p->add_option("--data", predict.data, "LIBSVM text or binary cache")->required();
  p->add_option("--out", predict.out, "write one prediction per row");
  p->add_option("--threads", predict.threads, "OpenMP threads per rank")->capture_default_str();
  p->add_flag("--zero-based", predict.zero_based, "the file uses 0-based indices");
  p->add_option("--max-memory", predict.max_memory, "most a rank may allocate for its rows: 512M, 8G, 0 (no check), auto (the node's available memory / its ranks)");

  mpisgd::ConvertConfig convert;
  auto* c = app.add_subcommand("convert", "convert LIBSVM text into the binary cache");
  c->footer("--config FILE reads these flags from a TOML/INI file, under a [convert] section.");
  add_logging(c, log_level);
  c->add_option("--data", convert.data, "LIBSVM text file")->required();
  c->add_option("--out", convert.out, "binary cache to write")->required();
  c->add_option("--dim", convert.dim, "number of features (default: the largest index)");
  c->add_flag("--zero-based", convert.zero_based, "the file uses 0-based indices");
  c->add_option("--max-memory", convert.max_memory, "most a rank may allocate for its rows: 512M, 8G, 0 (no check), auto (the node's available memory / its ranks)");

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int code = rank == 0 ? app.exit(e) : e.get_exit_code();
    MPI_Finalize();
    return code;
  }

  mpisgd::init_logging(rank, log_level);
  spdlog::debug("MPI: {}", mpisgd::mpi_granted());
  try {
    if (*t) {
      mpisgd::Watchdog watchdog(MPI_COMM_WORLD, train.comm_timeout);
      if (train.comm_timeout > 0 && !watchdog.names_peers())
        spdlog::warn("--comm-timeout: MPI grants no MPI_THREAD_MULTIPLE, so a stall report names only what each "
                     "rank waited in, not the rank that stalled");
      mpisgd::run_train(train, MPI_COMM_WORLD);
    }
    if (*p) mpisgd::run_predict(predict, MPI_COMM_WORLD);
    if (*c) mpisgd::run_convert(convert, MPI_COMM_WORLD);
  } catch (const mpisgd::JobFailed& e) {
    // Every rank agreed on this failure; one message, then a clean exit everywhere.
    if (rank == 0) spdlog::error("{}", e.what());
    MPI_Finalize();
    return 1;
  } catch (const std::exception& e) {
    // A failure only this rank saw: its peers may be inside a collective, so abort them.
    spdlog::critical("{}", e.what());
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  MPI_Finalize();
  return 0;
}
