// Parameter servers (ps-sync, ps-async): the model of allreduce on the W workers, the
// staleness bound, balanced shards, flag checks, and shutdown with uneven or slow workers.
// The servers need P >= 2; at P = 1 the tests check that the job says so.
#include <catch2/catch.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <random>
#include <sstream>
#include <thread>

#include "comm/extrema.h"
#include "comm/job_error.h"
#include "data/labels.h"
#include "data/load_dataset.h"
#include "forwarding_strategy.h"
#include "jobs/train_job.h"
#include "model/model_file.h"
#include "mpi_test_util.h"
#include "ps/ps_config.h"
#include "ps/shard_map.h"
#include "ps_test_util.h"
#include "sgd/evaluate.h"
#include "strategies/strategy.h"

using namespace mpisgd;
using namespace mpisgd::test;

namespace {

// Sleeps in each of this rank's steps when `slow`, between its pull and its push, so that
// the others' pushes make its own stale.
class SlowWorker final : public ForwardingStrategy {
 public:
  SlowWorker(std::unique_ptr<Strategy> inner, bool slow) : ForwardingStrategy(std::move(inner)), slow_(slow) {}
  uint64_t exchange(const Stream<float>& local, double eta, Weights& w) override {
    if (slow_) std::this_thread::sleep_for(std::chrono::milliseconds(3));
    return ForwardingStrategy::exchange(local, eta, w);
  }

 private:
  bool slow_;
};

}  // namespace

TEST_CASE("ps-sync trains the model allreduce trains on its W workers", "[ps]") {
  const int p = world_size();
  std::string dir = scratch_dir();
  std::string cls = write_file("ps_cls.svm", skewed_file(300, 1, false));
  std::string reg = write_file("ps_reg.svm", skewed_file(300, 2, true));
  if (p == 1) {
    TrainConfig c = quick_config(cls, dir + "/never.model");
    c.strategy = "ps-sync";
    REQUIRE_THROWS_WITH(run_train(c, MPI_COMM_WORLD), Catch::Contains("leaves no rank to train"));
    return;
  }
  struct Case {
    std::string model, schedule;
    double l2;
  };
  const Case cases[] = {{"logreg", "constant", 0},      {"logreg", "invscaling", 1e-3}, {"logreg", "adagrad", 1e-3},
                        {"svm", "invscaling", 1e-3},    {"linreg", "constant", 1e-3}};
  for (int servers = 1; servers <= std::min(2, p - 1); ++servers) {
    for (const Case& k : cases) {
      CAPTURE(servers, k.model, k.schedule, k.l2);
      TrainConfig c = quick_config(k.model == "linreg" ? reg : cls, dir + "/ar.model");
      c.model = k.model;
      c.lr_schedule = k.schedule;
      c.l2 = k.l2;
      c.sgd.lr = k.model == "linreg" ? 0.1 : 0.5;
      train_on_first(p - servers, c);
      c.strategy = "ps-sync";
      ps_flags(c).servers = servers;
      c.save_model = dir + "/ps.model";
      run_train(c, MPI_COMM_WORLD);
      REQUIRE(on_all_ranks(relative_difference(dir + "/ps.model", dir + "/ar.model") <= 1e-6));
    }
  }
}

TEST_CASE("ps-async with --max-staleness 0 is ps-sync; bounded and unbounded ones learn", "[ps][many-steps]") {
  const int p = world_size();
  if (p == 1) return;  // the servers need a rank of their own
  std::string dir = scratch_dir();
  std::string train = write_file("ps_async_train.svm", skewed_file(600, 3, false));
  std::string test = write_file("ps_async_test.svm", skewed_file(300, 4, false));
  TrainConfig c = learning_config(train, dir + "/sync.model");
  run_train(c, MPI_COMM_WORLD);
  const double sync_accuracy = accuracy(dir + "/sync.model", test);
  REQUIRE(on_all_ranks(sync_accuracy > 0.85));

  c.strategy = "ps-async";
  ps_flags(c).max_staleness = 0;
  c.save_model = dir + "/async0.model";
  run_train(c, MPI_COMM_WORLD);
  REQUIRE(on_all_ranks(relative_difference(dir + "/async0.model", dir + "/sync.model") <= 1e-6));

  for (int64_t bound : {int64_t{1}, ParameterServerConfig::kUnbounded}) {
    for (int servers = 1; servers <= std::min(2, p - 1); ++servers) {
      CAPTURE(bound, servers);
      ps_flags(c).max_staleness = bound;
      ps_flags(c).servers = servers;
      c.save_model = dir + "/async.model";
      run_train(c, MPI_COMM_WORLD);
      REQUIRE(on_all_ranks(accuracy(dir + "/async.model", test) > kAsyncLearned));
    }
  }
}

TEST_CASE("co-located servers: ps-sync trains allreduce's model on all P ranks, ps-async learns", "[ps]") {
  std::string dir = scratch_dir();
  std::string cls = write_file("ps_colo_cls.svm", skewed_file(300, 8, false));
  std::string reg = write_file("ps_colo_reg.svm", skewed_file(300, 9, true));
  std::string test = write_file("ps_colo_test.svm", skewed_file(300, 10, false));
  struct Case {
    std::string model, schedule;
  };
  for (const Case& k : {Case{"logreg", "invscaling"}, Case{"logreg", "adagrad"}, Case{"linreg", "constant"}}) {
    CAPTURE(k.model, k.schedule);
    TrainConfig c = quick_config(k.model == "linreg" ? reg : cls, dir + "/ar.model");
    c.model = k.model;
    c.lr_schedule = k.schedule;
    c.l2 = 1e-3;
    c.sgd.lr = k.model == "linreg" ? 0.1 : 0.5;
    run_train(c, MPI_COMM_WORLD);
    c.strategy = "ps-sync";
    ps_flags(c).colocated = true;
    c.save_model = dir + "/colo.model";
    run_train(c, MPI_COMM_WORLD);
    REQUIRE(on_all_ranks(relative_difference(dir + "/colo.model", dir + "/ar.model") <= 1e-6));
  }

  // Enough rows that every rank of six still takes enough steps to learn.
  std::string train = write_file("ps_colo_train.svm", skewed_file(600, 11, false));
  TrainConfig c = learning_config(train, dir + "/sync.model");
  ps_flags(c).colocated = true;
  run_train(c, MPI_COMM_WORLD);
  const double sync_accuracy = accuracy(dir + "/sync.model", test);
  REQUIRE(on_all_ranks(sync_accuracy > 0.85));
  c.strategy = "ps-async";
  for (int64_t bound : {int64_t{0}, int64_t{1}, ParameterServerConfig::kUnbounded}) {
    CAPTURE(bound);
    ps_flags(c).max_staleness = bound;
    c.save_model = dir + "/async.model";
    run_train(c, MPI_COMM_WORLD);
    if (bound == 0) REQUIRE(on_all_ranks(relative_difference(dir + "/async.model", dir + "/sync.model") <= 1e-6));
    REQUIRE(on_all_ranks(accuracy(dir + "/async.model", test) > kAsyncLearned));
  }
}

TEST_CASE("--servers colocated needs MPI_THREAD_MULTIPLE and says so", "[ps][errors]") {
  ParameterServerConfig c;
  REQUIRE_NOTHROW(check_thread_level(c, MPI_THREAD_FUNNELED));
  c.colocated = true;
  REQUIRE_NOTHROW(check_thread_level(c, MPI_THREAD_MULTIPLE));
  REQUIRE_THROWS_WITH(check_thread_level(c, MPI_THREAD_SERIALIZED),
                      Catch::Contains("needs MPI_THREAD_MULTIPLE") && Catch::Contains("MPI_THREAD_SERIALIZED"));
}

TEST_CASE("parameter-server flags are checked at start on every rank", "[ps][errors]") {
  std::string dir = scratch_dir();
  std::string data = write_file("ps_flags.svm", skewed_file(40, 5, false));
  TrainConfig c = quick_config(data, dir + "/never.model");
  c.strategy = "ps-sync";
  ps_flags(c).servers = world_size();
  REQUIRE_THROWS_WITH(run_train(c, MPI_COMM_WORLD), Catch::Contains("leaves no rank to train"));
  ps_flags(c).servers = 0;
  ps_flags(c).max_staleness = 2;
  REQUIRE_THROWS_WITH(run_train(c, MPI_COMM_WORLD), Catch::Contains("--max-staleness bounds ps-async"));
  c.strategy = "allreduce";
  REQUIRE_THROWS_WITH(run_train(c, MPI_COMM_WORLD), Catch::Contains("--max-staleness is for --strategy ps-async"));
  ps_flags(c).max_staleness = ParameterServerConfig::kUnbounded;
  ps_flags(c).servers = 1;
  REQUIRE_THROWS_WITH(run_train(c, MPI_COMM_WORLD), Catch::Contains("--servers is for"));
  ps_flags(c).servers = 0;
  ps_flags(c).colocated = true;
  REQUIRE_THROWS_WITH(run_train(c, MPI_COMM_WORLD), Catch::Contains("--servers is for"));
  REQUIRE(on_all_ranks(!std::filesystem::exists(dir + "/never.model")));
}

TEST_CASE("shards are contiguous, cover [0, N) and balance the expected traffic", "[ps]") {
  std::string data = write_file("ps_shards.svm", skewed_file(400, 6, false));
  const Dataset d = load_dataset(data, MPI_COMM_WORLD, {}).data;
  for (int servers : {1, 2, 3, 7, 80}) {
    CAPTURE(servers);
    const ShardMap map = ShardMap::balance(d, 8, servers, MPI_COMM_WORLD);
    bool ok = map.servers() == servers && map.shard(0).begin == 0 && map.shard(servers - 1).end == d.dim;
    double shares = 0, top = 0;
    for (int s = 0; s < servers; ++s) {
      ok = ok && map.shard(s).begin <= map.shard(s).end && (s == 0 || map.shard(s).begin == map.shard(s - 1).end);
      shares += map.share(s);
      top = std::max(top, map.share(s));
    }
    REQUIRE(on_all_ranks(ok && std::abs(shares - 1) < 1e-9));
    // The head features (1-4, in half the rows each) are at low indices: equal index
    // ranges would give the first of 2 or 3 servers well over its share.
    if (servers <= 3) REQUIRE(on_all_ranks(top < 1.2 / servers));
    // Every server has its part of an ascending index list.
    std::vector<uint32_t> all(d.dim);
    for (uint32_t i = 0; i < d.dim; ++i) all[i] = i;
    std::vector<size_t> cuts;
    map.cut(all, cuts);
    bool cut_ok = cuts.size() == static_cast<size_t>(servers) + 1;
    for (int s = 0; cut_ok && s < servers; ++s)
      cut_ok = cuts[static_cast<size_t>(s)] == map.shard(s).begin && cuts[static_cast<size_t>(s) + 1] == map.shard(s).end;
    REQUIRE(on_all_ranks(cut_ok));
  }
}

TEST_CASE("parameter servers shut down cleanly with workers of 0 and 1 rows", "[ps]") {
  if (world_size() == 1) return;
  std::string data = write_file("ps_two.svm", "+1 1:1 3:1\n-1 2:1\n");
  TrainConfig c = quick_config(data, scratch_dir() + "/two.model");
  c.sgd.batch = 1;
  for (bool colocated : {false, true}) {
    for (std::string strategy : {"ps-sync", "ps-async"}) {
      for (int64_t bound : {ParameterServerConfig::kUnbounded, int64_t{0}, int64_t{1}}) {
        if (strategy == "ps-sync" && bound != ParameterServerConfig::kUnbounded) continue;
        CAPTURE(colocated, strategy, bound);
        c.strategy = strategy;
        ps_flags(c).colocated = colocated;
        ps_flags(c).max_staleness = bound;
        REQUIRE_NOTHROW(run_train(c, MPI_COMM_WORLD));
      }
    }
  }
}

TEST_CASE("a slow worker holds nobody forever and leaves no message behind", "[ps]") {
  const int p = world_size();
  if (p == 1) return;
  std::string path = write_file("ps_slow.svm", skewed_file(200, 7, false));
  // Co-located servers' messages travel on communicators of their own (ps/channels.h),
  // which the probe below does not see: for them the test is that every rank ends.
  const bool colocated = GENERATE(false, true);
  for (int64_t bound : {ParameterServerConfig::kUnbounded, int64_t{0}, int64_t{2}}) {
    CAPTURE(colocated, bound);
    const int workers = colocated ? p : p - 1;
    bool clean = false;
    {
      CountedComm comm(MPI_COMM_WORLD);
      LoadOptions load;
      load.readers = workers;
      LoadedData d = load_dataset(path, MPI_COMM_WORLD, load);
      to_training_labels(d.data, agree_on_labels(path, d.first_labels, MPI_COMM_WORLD));
      Weights w(d.data.dim, 0, false);
      StrategyContext context{comm, d.data.dim};
      ps_flags(context).colocated = colocated;
      ps_flags(context).max_staleness = bound;
      context.step.batch = 10;
      context.train = &d.data;
      SlowWorker strategy(make_strategy("ps-async", context), world_rank() == 0);
      TrainOptions o;
      o.batch = 10;
      o.progress = false;
      Trainer trainer(d.data, Loss{LossKind::logistic}, w, strategy, comm, o);
      StrategyColumns columns;
      for (int epoch = 1; epoch <= 2; ++epoch) {
        summarize_epoch(epoch, trainer.run_epoch(epoch), comm.raw());
        columns = strategy.epoch_columns(comm.raw());
      }
      MPI_Barrier(comm.raw());
      int pending = 0;
      MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, comm.raw(), &pending, MPI_STATUS_IGNORE);
      const auto bits = static_cast<int64_t>(w.hash() >> 1);
      clean = !pending && min_over_ranks(MPI_COMM_WORLD, bits) == max_over_ranks(MPI_COMM_WORLD, bits);
      // The profile's columns: roles, times, and no staleness where every worker waits (K = 0).
      if (world_rank() == 0) {
        auto column = [&columns](const std::string& name) {
          for (const auto& [n, value] : columns.cells)
            if (n == name) return std::stod(value);
          return std::nan("");  // fails every comparison below
        };
        clean = clean && columns.cells.size() == strategy.profile_columns().size() &&
                column("workers") == workers && column("servers") == (colocated ? p : 1) &&
                column("server_busy_min") >= 0 && column("server_busy_max") <= 1 && column("push_s_min") >= 0 &&
                column("wait_s_max") <= column("pull_s_max") && (bound != 0 || column("staleness_max") == 0);
      }
    }
    REQUIRE(on_all_ranks(clean));
  }
}
