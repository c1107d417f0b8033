// --overlap under the parameter servers: with --max-overlap-steps 0 the model of a run
// without it, bit for bit; with M > 0 ps-sync still does not depend on timing and every
// variant learns; the flag is checked; every rank ends with uneven and slow workers.
// The servers need P >= 2.
#include <catch2/catch.hpp>

#include <filesystem>

#include "jobs/train_job.h"
#include "mpi_test_util.h"
#include "ps/ps_config.h"
#include "ps_test_util.h"

using namespace mpisgd;
using namespace mpisgd::test;

namespace {

// --servers S, or co-located servers when S = 0.
void place_servers(TrainConfig& c, int servers) {
  ps_flags(c).servers = servers;
  ps_flags(c).colocated = servers == 0;
}

}  // namespace

TEST_CASE("--overlap with --max-overlap-steps 0 trains the model of a run without it", "[ps][ps-overlap]") {
  const int p = world_size();
  if (p == 1) return;
  const std::string dir = scratch_dir();
  const std::string data = write_file("ps_overlap_same.svm", skewed_file(300, 11, false));
  struct Case {
    std::string strategy, schedule;
    int servers;
    double l2, drop_rate;
  };
  const Case cases[] = {{"ps-sync", "invscaling", 1, 1e-3, 0},   {"ps-sync", "adagrad", 0, 1e-3, 0},
                        {"ps-sync", "constant", 2, 0, 0},         {"ps-async", "invscaling", 1, 1e-3, 0},
                        {"ps-sync", "invscaling", 1, 1e-3, 0.5}, {"ps-async", "constant", 0, 0, 0.5}};
  for (const Case& k : cases) {
    if (k.servers >= p) continue;
    CAPTURE(k.strategy, k.schedule, k.servers, k.l2, k.drop_rate);
    TrainConfig c = quick_config(data, dir + "/plain.model");
    c.strategy = k.strategy;
    c.lr_schedule = k.schedule;
    c.l2 = k.l2;
    place_servers(c, k.servers);
    ps_flags(c).drop_rate = k.drop_rate;
    // ps-async at K = 0 runs as ps-sync; unbounded, its model depends on arrival order.
    if (k.strategy == "ps-async") ps_flags(c).max_staleness = 0;
    run_train(c, MPI_COMM_WORLD);
    ps_flags(c).overlap = true;
    ps_flags(c).max_overlap_steps = 0;
    c.save_model = dir + "/overlap.model";
    run_train(c, MPI_COMM_WORLD);
    REQUIRE(on_all_ranks(relative_difference(dir + "/overlap.model", dir + "/plain.model") == 0));
  }
}

TEST_CASE("--overlap with M > 0: ps-sync does not depend on timing, and every variant learns", "[ps][ps-overlap]") {
  const int p = world_size();
  if (p == 1) return;
  const std::string dir = scratch_dir();
  const std::string train = write_file("ps_overlap_train.svm", skewed_file(600, 12, false));
  const std::string test = write_file("ps_overlap_test.svm", skewed_file(300, 13, false));
  TrainConfig c = learning_config(train, dir + "/plain.model");
  run_train(c, MPI_COMM_WORLD);
  const double plain = accuracy(dir + "/plain.model", test);
  REQUIRE(on_all_ranks(plain > 0.85));

  ps_flags(c).overlap = true;
  ps_flags(c).max_overlap_steps = 3;
  for (int servers : {1, 0}) {
    CAPTURE(servers);
    place_servers(c, servers);
    c.save_model = dir + "/first.model";
    run_train(c, MPI_COMM_WORLD);
    c.save_model = dir + "/second.model";
    run_train(c, MPI_COMM_WORLD);
    REQUIRE(on_all_ranks(relative_difference(dir + "/second.model", dir + "/first.model") == 0));
    // M steps on values up to 2M steps old cost little on a problem this small.
    REQUIRE(on_all_ranks(accuracy(dir + "/first.model", test) > plain - 0.03));
  }

  c.strategy = "ps-async";
  for (int servers : {1, 0}) {
    for (double drop_rate : {0.0, 0.5}) {
      CAPTURE(servers, drop_rate);
      place_servers(c, servers);
      ps_flags(c).drop_rate = drop_rate;
      c.save_model = dir + "/async.model";
      run_train(c, MPI_COMM_WORLD);
      REQUIRE(on_all_ranks(accuracy(dir + "/async.model", test) > kAsyncLearned));
    }
  }
}

TEST_CASE("--overlap: workers of 0 and 1 rows and a slow worker hold nobody forever", "[ps][ps-overlap]") {
  const int p = world_size();
  if (p == 1) return;
  const std::string dir = scratch_dir();
  const std::string two = write_file("ps_overlap_two.svm", "+1 1:1 3:1\n-1 2:1\n");
  const std::string slow = write_file("ps_overlap_slow.svm", skewed_file(200, 14, false));
  for (int servers : {1, 0}) {
    for (std::string strategy : {"ps-sync", "ps-async"}) {
      for (int64_t bound : {ParameterServerConfig::kUnbounded, int64_t{1}}) {
        if (strategy == "ps-sync" && bound != ParameterServerConfig::kUnbounded) continue;
        CAPTURE(servers, strategy, bound);
        TrainConfig c = quick_config(two, dir + "/two.model");
        c.sgd.batch = 1;
        c.strategy = strategy;
        place_servers(c, servers);
        ps_flags(c).max_staleness = bound;
        ps_flags(c).overlap = true;
        ps_flags(c).max_overlap_steps = 2;
        REQUIRE_NOTHROW(run_train(c, MPI_COMM_WORLD));
        c.data = slow;
        c.sgd.batch = 10;
        c.sgd.slow_rank = 0;
        c.sgd.slow_factor = 3;
        REQUIRE_NOTHROW(run_train(c, MPI_COMM_WORLD));
      }
    }
  }
}

TEST_CASE("--overlap is checked at start on every rank", "[ps][ps-overlap][errors]") {
  const std::string dir = scratch_dir();
  const std::string data = write_file("ps_overlap_flags.svm", skewed_file(40, 15, false));
  TrainConfig c = quick_config(data, dir + "/never.model");
  ps_flags(c).overlap = true;
  REQUIRE_THROWS_WITH(run_train(c, MPI_COMM_WORLD), Catch::Contains("--overlap is for --strategy ps-sync or ps-async"));
  REQUIRE(on_all_ranks(!std::filesystem::exists(dir + "/never.model")));

  ParameterServerConfig ps;
  ps.overlap = true;
  REQUIRE_NOTHROW(check_thread_level(ps, MPI_THREAD_MULTIPLE));
  REQUIRE_THROWS_WITH(check_thread_level(ps, MPI_THREAD_FUNNELED),
                      Catch::Contains("--overlap") && Catch::Contains("needs MPI_THREAD_MULTIPLE") &&
                          Catch::Contains("MPI_THREAD_FUNNELED"));
}
