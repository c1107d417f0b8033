// Local SGD (strategies/local_sgd.cpp): averaging after every step is the synchronous step
// of the global batch, and an average is the mean of the ranks' models, exactly where no
// rank moved and to float rounding elsewhere, with L2's scale renormalised mid-round.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "mpi_test_util.h"
#include "ps_test_util.h"
#include "strategies/local_sgd.h"
#include "strategies/strategy.h"
#include "tests/sparse_pairs.h"

using namespace mpisgd;
using namespace mpisgd::test;

TEST_CASE("local-sgd averaging after every step trains allreduce's model", "[local-sgd]") {
  const std::string dir = scratch_dir();
  const std::string train = write_file("local_sgd_train.svm", skewed_file(300, 21, false));
  const int threads = GENERATE(1, 2);
  const double l2 = GENERATE(0.0, 1e-3);
  CAPTURE(threads, l2);
  auto run = [&](const std::string& strategy, const std::string& model) {
    TrainConfig c = quick_config(train, dir + "/" + model);
    c.strategy = strategy;
    c.l2 = l2;
    c.sgd.threads = threads;
    c.sgd.epochs = 3;
    if (strategy == "local-sgd") c.strategy_flags.get<LocalSgdConfig>().sync_every = 1;
    run_train(c, MPI_COMM_WORLD);
    return c.save_model;
  };
  const std::string synchronous = run("allreduce", "allreduce.model");
  const std::string local = run("local-sgd", "local.model");
  CHECK(relative_difference(local, synchronous) < 1e-6);
}

TEST_CASE("local-sgd on one rank is plain SGD: sparse-auto's model, bit for bit", "[local-sgd]") {
  if (world_size() != 1) return;  // the other rank counts are the tests above and below
  const std::string dir = scratch_dir();
  const std::string train = write_file("local_sgd_one.svm", skewed_file(300, 22, false));
  auto run = [&](const std::string& strategy) {
    TrainConfig c = quick_config(train, dir + "/" + strategy + ".model");
    c.strategy = strategy;
    c.sgd.epochs = 3;
    run_train(c, MPI_COMM_WORLD);
    return c.save_model;
  };
  CHECK(relative_difference(run("local-sgd"), run("sparse-auto")) == 0);
}

TEST_CASE("a local-sgd average is the mean of the ranks' models", "[local-sgd]") {
  const uint32_t dim = 600;
  const uint64_t every = GENERATE(2, 3, 5);
  CAPTURE(every);
  CountedComm comm(MPI_COMM_WORLD);
  StrategyContext context{comm, dim};
  context.flags.get<LocalSgdConfig>().sync_every = every;
  auto s = make_strategy("local-sgd", context);
  // eta x l2 = 0.5: the scale falls below the renormalisation bound in about 20 steps.
  Weights w(dim, 0.5, false);
  std::mt19937 rng(3 + 11 * world_rank());
  const Dataset none;
  bool mean = true, same = true, unmoved_exact = true, between_unchanged = true;
  int averages = 0;
  std::vector<int> moved(dim, 0);  // by this rank since the last average
  for (uint64_t step = 0; step < 40; ++step) {
    // The mean every rank should get if this refresh averages, and the coordinates no
    // rank has moved since the last average, whose bits must not change.
    const std::vector<double> mine = w.values();
    std::vector<double> sum = mine;
    MPI_Allreduce(MPI_IN_PLACE, sum.data(), static_cast<int>(dim), MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    std::vector<int> moved_anywhere = moved;
    MPI_Allreduce(MPI_IN_PLACE, moved_anywhere.data(), static_cast<int>(dim), MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    s->refresh(none, {}, w);
    const std::vector<double> now = w.values();
    uint64_t h = w.hash(), h0 = h;
    MPI_Bcast(&h0, 1, MPI_UINT64_T, 0, MPI_COMM_WORLD);
    if (step > 0 && step % every == 0) {
      ++averages;
      same = same && h == h0;
      double largest = 0;
      for (double v : sum) largest = std::max(largest, std::abs(v) / world_size());
      for (uint32_t i = 0; i < dim; ++i) {
        const double want = sum[i] / world_size();
        mean = mean && std::abs(now[i] - want) <= 1e-6 * largest;
        unmoved_exact = unmoved_exact && (moved_anywhere[i] || now[i] == mine[i]);
      }
      std::fill(moved.begin(), moved.end(), 0);
    } else {
      between_unchanged = between_unchanged && now == mine;
    }
    // This rank's own step: a few coordinates of its own, some shared with the others.
    SparseVector g;
    for (uint32_t i = 0; i < dim; i += 1 + static_cast<uint32_t>(rng() % 40)) {
      g.index.push_back(i);
      g.value.push_back(static_cast<float>(static_cast<int>(rng() % 9) - 4) / 4.0f);
      moved[i] = 1;
    }
    s->exchange(paired(g), 1.0, w);
  }
  s->after_epoch(0, w);
  uint64_t h = w.hash(), h0 = h;
  MPI_Bcast(&h0, 1, MPI_UINT64_T, 0, MPI_COMM_WORLD);
  CHECK(averages > 0);
  CHECK(on_all_ranks(mean));
  CHECK(on_all_ranks(same && h == h0));
  CHECK(on_all_ranks(unmoved_exact));
  CHECK(on_all_ranks(between_unchanged));
}

TEST_CASE("an auto period is settled alike on every rank, keeping 8 averages an epoch", "[local-sgd]") {
  if (world_size() == 1) return;  // one rank averages nothing
  const uint32_t dim = 5000;
  // Uneven rows: the epoch's steps are the longest rank's, 100 rows / batch 2 = 50 steps,
  // so the longest period allowed is 6.
  Dataset rows;
  rows.label.resize(world_rank() == 0 ? 100 : 90);
  CountedComm comm(MPI_COMM_WORLD);
  StrategyContext context{comm, dim};
  context.train = &rows;
  context.step.batch = 2;
  auto s = make_strategy("local-sgd", context);
  Weights w(dim, 0, false);
  std::mt19937 rng(5 + 7 * world_rank());
  const Dataset none;
  std::vector<std::string> periods, rounds;
  for (int epoch = 1; epoch <= 3; ++epoch) {
    s->before_epoch(epoch);
    for (int step = 0; step < 50; ++step) {
      s->refresh(none, {}, w);
      SparseVector g;
      for (uint32_t i = rng() % 50; i < dim; i += 1 + static_cast<uint32_t>(rng() % 100)) {
        g.index.push_back(i);
        g.value.push_back(0.01f * static_cast<float>(static_cast<int>(rng() % 9) - 4));
      }
      s->exchange(paired(g), 1.0, w);
    }
    s->after_epoch(epoch, w);
    const StrategyColumns columns = s->epoch_columns(MPI_COMM_WORLD);
    REQUIRE(columns.cells.size() == 2);
    rounds.push_back(columns.cells[0].second);
    periods.push_back(columns.cells[1].second);
  }
  CAPTURE(periods, rounds);
  const uint64_t settled = std::stoull(periods.back());
  uint64_t h = w.hash(), h0 = h;
  MPI_Bcast(&h0, 1, MPI_UINT64_T, 0, MPI_COMM_WORLD);
  uint64_t lo = settled, hi = settled;
  MPI_Allreduce(MPI_IN_PLACE, &lo, 1, MPI_UINT64_T, MPI_MIN, MPI_COMM_WORLD);
  MPI_Allreduce(MPI_IN_PLACE, &hi, 1, MPI_UINT64_T, MPI_MAX, MPI_COMM_WORLD);
  CHECK(lo == hi);
  CHECK(settled >= 1);
  CHECK(settled <= 6);
  CHECK(periods[1] == periods[2]);
  // The first epoch's two measured rounds take the longest period, 6 steps each.
  CHECK(std::stoull(rounds[0]) >= 9);
  CHECK(std::stoull(rounds[2]) == (50 + settled - 1) / settled);
  CHECK(on_all_ranks(h == h0));
}
