// mpisgd: distributed SGD for sparse linear models. Run under mpirun; see README.md.
//   mpisgd train    --data F [--test F] --model logreg|svm|linreg --strategy NAME ...
//   mpisgd predict  --model m.txt --data F [--out preds.txt]
//   mpisgd convert  --data F --out F.bin
#include <optional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <mpi.h>
#include <spdlog/spdlog.h>

#include "cli/apply_config.h"
#include "cli/flag_values.h"
#include "cli/parse_args.h"
#include "comm/job_error.h"
#include "comm/log.h"
#include "comm/simulation.h"
#include "comm/temp_files.h"
#include "comm/thread_level.h"
#include "comm/watchdog.h"
#include "jobs/convert_job.h"
#include "jobs/predict_job.h"
#include "jobs/train_job.h"
#include "strategies/strategy.h"

namespace {

namespace cli = mpisgd::cli;

std::string strategy_help() {
  std::string help = "how ranks combine their updates:";
  for (const auto& s : mpisgd::strategy_registry()) help += "\n  " + s.name + ": " + s.summary;
  return help;
}

std::vector<std::string> strategy_names() {
  std::vector<std::string> names;
  for (const auto& s : mpisgd::strategy_registry()) names.push_back(s.name);
  return names;
}

// A subcommand with what every job takes: --log-level, and flags from --config.
CLI::App* add_job(CLI::App& app, const std::string& name, const std::string& description, std::string& log_level) {
  CLI::App* cmd = app.add_subcommand(name, description);
  cmd->footer("--config FILE reads these flags from a TOML/INI file, under a [" + name +
              "] section or outside any section.");
  cmd->add_option("--log-level", log_level, "trace|debug|info|warn|error|off (rank 0; other ranks warn)")
      ->transform(cli::one_of({"trace", "debug", "info", "warn", "error", "off"}));
  return cmd;
}

// --strategy, then each family's own flags (strategies/strategy.h, StrategyFamily).
void add_strategy_flags(CLI::App& t, mpisgd::TrainConfig& train) {
  t.add_option("--strategy", train.strategy, strategy_help())
      ->transform(cli::one_of(strategy_names()))
      ->capture_default_str();
  for (const mpisgd::StrategyFamily* family : mpisgd::strategy_families())
    family->declare_flags(t, train.strategy_flags);
}

void add_step_flags(CLI::App& t, mpisgd::TrainConfig& train) {
  t.add_option("--epochs", train.sgd.epochs, "most passes over the data (fewer when training stops early)")
      ->transform(cli::positive_whole<int>())
      ->capture_default_str();
  // auto is stored as 0, resolved from the data at start (sgd/step_defaults.h).
  t.add_option_function<std::string>(
       "--batch", [&train](const std::string& v) { train.sgd.batch = v == "auto" ? 0 : std::stoull(v); },
       "rows per worker per step (global batch = batch x workers); auto: a global batch of about 100 rows, "
       "smaller where an epoch would take fewer than 200 steps")
      ->transform(cli::positive_whole<uint64_t>().or_word("auto"))
      ->default_str("auto");
  t.add_option_function<std::string>(
       "--lr", [&train](const std::string& v) { train.sgd.lr = v == "auto" ? 0 : std::stod(v); },
       "learning rate eta; auto: global batch / mean ||x||^2 of the training rows (x 0.25 for linreg), at most "
       "20 / the largest curvature of a batch (1 / it for linreg); 0.5 for adagrad; logged at start")
      ->transform(cli::positive_number().or_word("auto"))
      ->default_str("auto");
  t.add_option("--tol", train.stop.tol,
               "stop early once the training loss has not improved by TOL for --n-iter-no-change epochs")
      ->transform(cli::non_negative_number())
      ->capture_default_str();
  t.add_option("--n-iter-no-change", train.stop.patience, "epochs without improvement before stopping early")
      ->transform(cli::positive_whole<int>())
      ->capture_default_str();
  t.add_flag("!--no-early-stop", train.stop.enabled, "train all --epochs")->transform(cli::boolean());
  t.add_option("--lr-schedule", train.lr_schedule, "constant | invscaling (eta/sqrt(1+epochs done)) | adagrad")
      ->transform(cli::one_of({"constant", "invscaling", "adagrad"}))
      ->capture_default_str();
  t.add_option("--l2", train.l2, "L2 regularisation lambda (objective + lambda/2 ||w||^2)")
      ->transform(cli::non_negative_number())
      ->capture_default_str();
  t.add_option("--threads", train.sgd.threads, "OpenMP threads per rank for the gradient")
      ->transform(cli::positive_whole<int>())
      ->capture_default_str();
  t.add_option_function<std::string>(
       "--device", [&train](const std::string& v) { train.sgd.device.kind = mpisgd::device_from_name(v); },
       "where the batch gradients are computed: cpu (default) | gpu (a build with `make GPU=1` or GPU=omp)")
      ->transform(cli::one_of({"cpu", "gpu"}));
  t.add_option("--gpu-id", train.sgd.device.gpu_id,
               "with --device gpu: the GPU each rank uses (default: its number on the node modulo the GPUs seen)")
      ->transform(cli::non_negative_whole<int>());
  t.add_option("--seed", train.sgd.seed, "shuffling seed")
      ->transform(cli::non_negative_whole<uint64_t>())
      ->capture_default_str();
}

void add_checkpoint_flags(CLI::App& t, mpisgd::TrainConfig& train) {
  t.add_option("--checkpoint", train.checkpoint, "write a checkpoint into DIR at epoch ends (the last two kept)");
  t.add_option("--checkpoint-every", train.checkpoint_every,
               "checkpoint every K epochs (default 1 unless --checkpoint-seconds is given)")
      ->transform(cli::positive_whole<int>());
  t.add_option("--checkpoint-seconds", train.checkpoint_seconds,
               "checkpoint at the first epoch end S seconds after the last checkpoint (checked at epoch ends only)")
      ->transform(cli::positive_number());
  t.add_option("--resume", train.resume,
               "continue from the newest valid checkpoint in DIR (same P, T, strategy, model, data and step settings)");
}

void add_slow_rank_flag(CLI::App& t, mpisgd::TrainOptions& sgd) {
  t.add_option_function<std::string>(
       "--slow-rank",
       [&sgd](const std::string& v) {
         const size_t colon = v.find(':');
         sgd.slow_rank = std::stoi(v.substr(0, colon));
         sgd.slow_factor = std::stod(v.substr(colon + 1));
       },
       "benchmark aid: rank R's steps take F times as long (R:F), to measure a straggler's cost")
      ->transform(cli::pair_of(cli::non_negative_whole<int>(), ':', cli::number_from_to(1, 1000),
                               "RANK:FACTOR such as 1:2, a factor from 1 to 1000"))
      ->type_name("R:F");
}

void add_train_flags(CLI::App& t, mpisgd::TrainConfig& train) {
  t.add_option("--data", train.data, "training set: LIBSVM text or binary cache")->required();
  t.add_option("--test", train.test, "test set, evaluated after every epoch");
  t.add_option("--model", train.model, "logreg (logistic loss), svm (hinge), linreg (squared)")
      ->transform(cli::one_of({"logreg", "svm", "linreg"}))
      ->capture_default_str();
  t.add_option("--multiclass", train.multiclass,
               "with three or more classes: ovr (one-vs-rest, as LIBLINEAR -s 0), softmax "
               "(multinomial logistic loss; logreg only) or crammer-singer (multi-class hinge, as LIBLINEAR "
               "-s 4; svm only)")
      ->transform(cli::one_of({"ovr", "softmax", "crammer-singer"}))
      ->default_str("softmax for logreg, ovr for svm");
  add_strategy_flags(t, train);
  add_step_flags(t, train);
  t.add_option("--profile", train.profile, "per-epoch profile: .csv or .jsonl");
  t.add_option("--save-model", train.save_model, "write the model in LIBLINEAR's format");
  t.add_option("--dim", train.dim, "number of features (default: the largest index)")
      ->transform(cli::non_negative_whole<uint64_t>());
  t.add_flag("--zero-based", train.zero_based, "the files use 0-based indices")->transform(cli::boolean());
  t.add_option("--feature-order", train.feature_order,
               "popularity (the model keeps frequent features together in memory; the model file "
               "keeps the file's numbering) or file (the file's numbering)")
      ->transform(cli::one_of({"popularity", "file"}))
      ->capture_default_str();
  t.add_option("--max-memory", train.max_memory, "most a rank may allocate for its rows: 512M, 8G, 0 (no check), auto (the node's available memory / its ranks)");
  t.add_flag("!--no-progress", train.sgd.progress, "no running progress line on the terminal")
      ->transform(cli::boolean());
  add_checkpoint_flags(t, train);
  t.add_option("--comm-timeout", train.comm_timeout,
               "end the job when a rank waits in one exchange longer than S seconds, naming the ranks that "
               "did not answer (0: wait forever)")
      ->transform(cli::number_from_to(0, 1e6))
      ->capture_default_str();
  add_slow_rank_flag(t, train.sgd);
}

void add_predict_flags(CLI::App& p, mpisgd::PredictConfig& predict) {
  p.add_option("--model", predict.model, "model file (ours or LIBLINEAR's)")->required();
  p.add_option("--data", predict.data, "LIBSVM text or binary cache")->required();
  p.add_option("--out", predict.out, "write one prediction per row");
  p.add_option("--probabilities", predict.probabilities,
               "with --out, logistic models: each row's class probabilities after its label, as LIBLINEAR's "
               "predict -b 1 writes them: ovr (LIBLINEAR's: each class's sigmoid, normalised) or softmax "
               "(of the margins: models trained with --multiclass softmax)")
      ->transform(cli::one_of({"ovr", "softmax"}));
  p.add_option("--threads", predict.threads, "OpenMP threads per rank")
      ->transform(cli::positive_whole<int>())
      ->capture_default_str();
  p.add_flag("--zero-based", predict.zero_based, "the file uses 0-based indices")->transform(cli::boolean());
  p.add_option("--max-memory", predict.max_memory, "most a rank may allocate for its rows: 512M, 8G, 0 (no check), auto (the node's available memory / its ranks)");
}

void add_convert_flags(CLI::App& c, mpisgd::ConvertConfig& convert) {
  c.add_option("--data", convert.data, "LIBSVM text file")->required();
  c.add_option("--out", convert.out, "binary cache to write")->required();
  c.add_option("--dim", convert.dim, "number of features (default: the largest index)")
      ->transform(cli::non_negative_whole<uint64_t>());
  c.add_flag("--zero-based", convert.zero_based, "the file uses 0-based indices")->transform(cli::boolean());
  c.add_option("--max-memory", convert.max_memory, "most a rank may allocate for its rows: 512M, 8G, 0 (no check), auto (the node's available memory / its ranks)");
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
  // Fallthrough lets `--config` follow the subcommand. Its callback runs once the command
  // line is parsed and before required flags are checked (cli/apply_config.h).
  app.add_option_function<std::string>(
         "--config", [&app](const std::string& path) { cli::apply_config_file(path, app); },
         "read flags from a TOML/INI file: under [train], [predict] or [convert], or outside any section for "
         "the subcommand run")
      ->type_name("FILE");
  app.fallthrough();
  std::string log_level = "info";
  mpisgd::TrainConfig train;
  // No watchdog under simulation (comm/simulation.h): its default there is off, and any
  // other value is refused when the run's settings are checked.
  if constexpr (mpisgd::kSimulated) train.comm_timeout = 0;
  mpisgd::PredictConfig predict;
  mpisgd::ConvertConfig convert;
  CLI::App* t = add_job(app, "train", "train a model with mini-batch SGD on all ranks", log_level);
  add_train_flags(*t, train);
  CLI::App* p = add_job(app, "predict", "accuracy or RMSE of a saved model on a dataset", log_level);
  add_predict_flags(*p, predict);
  CLI::App* c = add_job(app, "convert", "convert LIBSVM text into the binary cache", log_level);
  add_convert_flags(*c, convert);

  if (const std::optional<int> code = mpisgd::cli::parse_args(app, argc, argv, rank == 0)) {
    MPI_Finalize();
    return *code;
  }

  mpisgd::init_logging(rank, log_level);
  spdlog::debug("MPI: {}", mpisgd::mpi_granted());
  try {
    if (*t) {
      const double watch_s = mpisgd::kSimulated ? 0 : train.comm_timeout;
      mpisgd::Watchdog watchdog(MPI_COMM_WORLD, watch_s);
      if (watch_s > 0 && !watchdog.names_peers())
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
    mpisgd::abort_job(MPI_COMM_WORLD);
  }
  MPI_Finalize();
  return 0;
}
