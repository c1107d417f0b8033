// End-to-end training on every rank: reproducibility, learning, and ranks without rows.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <random>
#include <sstream>

#include "collectives/sparse_allreduce.h"
#include "comm/job_error.h"
#include "data/load_dataset.h"
#include "jobs/train_job.h"
#include "model/model_file.h"
#include "mpi_test_util.h"
#include "sgd/evaluate.h"
#include "strategies/strategy.h"

using namespace mpisgd;
using namespace mpisgd::test;

namespace {

// Rows with ~8 of 60 binary features; labels from a hidden linear model (regression:
// its value), so a linear model can fit them.
double hidden_weight(int feature) { return (feature % 3 == 0 ? 1.0 : -0.7) * (1 + feature % 5) / 5.0; }

std::string linear_file(int rows, unsigned seed, bool regression) {
  std::mt19937 rng(seed);
  std::vector<double> hidden(61);
  for (int i = 1; i <= 60; ++i) hidden[static_cast<size_t>(i)] = hidden_weight(i);
  std::string text;
  for (int r = 0; r < rows; ++r) {
    std::string features;
    double margin = 0;
    for (int i = 1; i <= 60; ++i) {
      if (rng() % 8) continue;
      features += " " + std::to_string(i) + ":1";
      margin += hidden[static_cast<size_t>(i)];
    }
    std::ostringstream label;
    if (regression) label << margin;
    else label << (margin > 0 ? "+1" : "-1");
    text += label.str() + features + "\n";
  }
  return text;
}

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// Same file on every rank? Rank 0 compares and tells everyone.
bool same_files(const std::string& a, const std::string& b) {
  int same = world_rank() == 0 ? slurp(a) == slurp(b) : 0;
  MPI_Bcast(&same, 1, MPI_INT, 0, MPI_COMM_WORLD);
  return same != 0;
}

TrainConfig config(const std::string& data, const std::string& model_out) {
  TrainConfig c;
  c.data = data;
  c.save_model = model_out;
  c.sgd.epochs = 4;
  c.sgd.batch = 16;
  c.sgd.lr = 1.0;
  c.sgd.progress = false;
  return c;
}

double accuracy(const std::string& model_path, const std::string& data) {
  LinearModel m = load_model(model_path);
  Dataset d = load_dataset(data, MPI_COMM_WORLD, {}).data;
  return evaluate(d, Loss{m.loss}, m.labels, 1, MPI_COMM_WORLD, [&](auto i, auto v, auto out) { m.margins(i, v, out); })
      .result.metric;
}

}  // namespace

TEST_CASE("same seed, P and T give a bit-identical model; another seed does not", "[train]") {
  std::string data = write_file("lin.svm", linear_file(500, 1, false));
  std::string dir = scratch_dir();
  TrainConfig c = config(data, dir + "/a.model");
  c.sgd.threads = 2;
  run_train(c, MPI_COMM_WORLD);
  c.save_model = dir + "/b.model";
  run_train(c, MPI_COMM_WORLD);
  REQUIRE(same_files(dir + "/a.model", dir + "/b.model"));
  c.sgd.seed = 2;
  c.save_model = dir + "/c.model";
  run_train(c, MPI_COMM_WORLD);
  REQUIRE_FALSE(same_files(dir + "/a.model", dir + "/c.model"));
}

TEST_CASE("every lossless sparse strategy trains the model allreduce trains", "[train][collectives]") {
  std::string data = write_file("lin.svm", linear_file(400, 5, false));
  std::string dir = scratch_dir();
  TrainConfig c = config(data, dir + "/allreduce.model");
  c.strategy = "allreduce";
  c.sgd.epochs = 2;
  run_train(c, MPI_COMM_WORLD);
  const std::vector<double> reference = load_model(c.save_model).w;
  double scale = 0;
  for (double v : reference) scale = std::max(scale, std::abs(v));
  REQUIRE(scale > 0.1);

  for (const auto& info : strategy_registry()) {
    if (info.name == "allreduce" || !info.lossless) continue;
    // -1: tuned to this machine; 0.0 sends every stream dense; 1.0 keeps them sparse to
    // the byte bound.
    for (double dense_switch : {-1.0, DenseSwitch::kMeasuredDensity, 0.0, 1.0}) {
      INFO("strategy " << info.name << ", dense switch " << dense_switch);
      c.strategy = info.name;
      c.strategy_flags.get<CollectiveConfig>().tune_dense_switch = dense_switch < 0;
      c.strategy_flags.get<CollectiveConfig>().dense_switch.density = std::max(dense_switch, 0.0);
      c.strategy_flags.get<CollectiveConfig>().group_size = 2;
      c.save_model = dir + "/" + info.name + ".model";
      run_train(c, MPI_COMM_WORLD);
      const std::vector<double> w = load_model(c.save_model).w;
      REQUIRE(w.size() == reference.size());
      double worst = 0;
      for (size_t j = 0; j < w.size(); ++j) worst = std::max(worst, std::abs(w[j] - reference[j]));
      // Exact where MPI_Allreduce sums in the recursive-doubling order the sparse
      // collectives use; otherwise only the rounding of a different order remains.
      CHECK(worst <= 1e-6 * scale);
    }
  }
}

TEST_CASE("the default strategy gives the same bits whichever algorithms serve its steps", "[train][collectives]") {
  std::string data = write_file("lin.svm", linear_file(400, 6, false));
  std::string dir = scratch_dir();
  TrainConfig c = config(data, dir + "/default.model");
  c.sgd.epochs = 2;
  REQUIRE(c.strategy == "sparse-auto");
  run_train(c, MPI_COMM_WORLD);

  // Every candidate tied and timed from the first step, over a link as fast as an
  // addition: the steps are served by each algorithm in turn, then by the fastest.
  TrainConfig tied = c;
  CollectiveConfig& collective = tied.strategy_flags.get<CollectiveConfig>();
  MachineSpeed speed = measure_machine_speed(CountedComm(MPI_COMM_WORLD));
  speed.network.beta = 1e-10;
  speed.compute.dense_element_s = 4e-10;
  collective.measured = speed;
  collective.tie_factor = 1e300;
  collective.tie_trials = 2;
  collective.tie_seconds = 0;
  collective.cold_calls = 0;
  tied.save_model = dir + "/tied.model";
  run_train(tied, MPI_COMM_WORLD);
  CHECK(same_files(dir + "/default.model", tied.save_model));

  for (const char* algorithm : {"ssar-rec-dbl", "ssar-split-ag", "ssar-shm", "dsar-split-ag"}) {
    INFO("strategy " << algorithm);
    TrainConfig one = c;
    one.strategy = algorithm;
    one.save_model = dir + "/" + algorithm + ".model";
    run_train(one, MPI_COMM_WORLD);
    CHECK(same_files(dir + "/default.model", one.save_model));
  }
}

TEST_CASE("logreg, svm and linreg learn a linear target", "[train][many-steps]") {
  std::string train = write_file("cls_train.svm", linear_file(800, 3, false));
  std::string test = write_file("cls_test.svm", linear_file(300, 4, false));
  std::string model = scratch_dir() + "/cls.model";
  for (std::string name : {"logreg", "svm"}) {
    for (std::string schedule : {"constant", "invscaling", "adagrad"}) {
      TrainConfig c = config(train, model);
      c.model = name;
      c.lr_schedule = schedule;
      c.l2 = 1e-4;
      c.sgd.epochs = 20;
      c.sgd.batch = 4;
      c.test = test;
      run_train(c, MPI_COMM_WORLD);
      CAPTURE(name, schedule);
      REQUIRE(accuracy(model, test) > 0.9);
    }
  }
  std::string rtrain = write_file("reg_train.svm", linear_file(800, 5, true));
  TrainConfig c = config(rtrain, model);
  c.model = "linreg";
  c.lr_schedule = "constant";
  c.sgd.lr = 0.5;
  c.sgd.epochs = 30;
  run_train(c, MPI_COMM_WORLD);
  LinearModel m = load_model(model);
  Dataset d = load_dataset(rtrain, MPI_COMM_WORLD, {}).data;
  double rmse = evaluate(d, Loss{m.loss}, m.labels, 1, MPI_COMM_WORLD, [&](auto i, auto v, auto out) { m.margins(i, v, out); })
                    .result.metric;
  REQUIRE(rmse < 0.2);  // the targets have a standard deviation of about 1.3
}

TEST_CASE("the default step finds a known optimum, the same bits each run", "[train][step][many-steps]") {
  // Noise-free regression: the hidden weights are the unique least-squares solution.
  const std::string train = write_file("opt_train.svm", linear_file(800, 11, true));
  const std::string dir = scratch_dir();
  TrainConfig c;
  c.data = train;
  c.model = "linreg";
  c.sgd.progress = false;
  c.save_model = dir + "/opt.model";
  run_train(c, MPI_COMM_WORLD);
  const std::vector<double> w = load_model(c.save_model).w;
  REQUIRE(w.size() >= 60);
  double worst = 0;
  for (int i = 1; i <= 60; ++i) worst = std::max(worst, std::abs(w[static_cast<size_t>(i - 1)] - hidden_weight(i)));
  CAPTURE(worst);
  CHECK(worst < 1e-3);

  c.save_model = dir + "/again.model";
  run_train(c, MPI_COMM_WORLD);
  CHECK(same_files(dir + "/opt.model", dir + "/again.model"));

  // Separable classes: the defaults separate unseen rows.
  c.model = "logreg";
  c.data = write_file("sep_train.svm", linear_file(800, 12, false));
  c.save_model = dir + "/sep.model";
  run_train(c, MPI_COMM_WORLD);
  CHECK(accuracy(c.save_model, write_file("sep_test.svm", linear_file(400, 13, false))) > 0.95);
}

TEST_CASE("ranks without rows still take part", "[train]") {
  std::string data = write_file("two.svm", "+1 1:1 3:1\n-1 2:1\n");
  TrainConfig c = config(data, scratch_dir() + "/two.model");
  c.sgd.batch = 1;
  REQUIRE_NOTHROW(run_train(c, MPI_COMM_WORLD));
}

TEST_CASE("bad settings end the job on every rank and leave no files", "[train][errors]") {
  std::string data = write_file("set.svm", linear_file(50, 9, false));
  std::string dir = scratch_dir();
  TrainConfig c = config(data, dir + "/never.model");
  c.profile = dir + "/profile.txt";
  REQUIRE_THROWS_WITH(run_train(c, MPI_COMM_WORLD), Catch::Contains("name it .csv or .jsonl"));
  c.profile.clear();
  c.strategy = "carrier-pigeon";
  REQUIRE_THROWS_WITH(run_train(c, MPI_COMM_WORLD), Catch::Contains("unknown strategy 'carrier-pigeon'"));
  c.strategy = "allreduce";
  c.l2 = 2;
  REQUIRE_THROWS_WITH(run_train(c, MPI_COMM_WORLD), Catch::Contains("--l2"));
  bool clean = !std::filesystem::exists(dir + "/never.model") && !std::filesystem::exists(dir + "/profile.txt.tmp");
  REQUIRE(on_all_ranks(clean));
}
