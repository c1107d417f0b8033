// ps-async's epoch is the rows' worth of pushes from all workers together: a straggler
// does fewer of them and the others go round their rows again, instead of everyone
// waiting for it as ps-sync does.
#include <catch2/catch.hpp>

#include <random>
#include <sstream>

#include "data/labels.h"
#include "data/load_dataset.h"
#include "forwarding_strategy.h"
#include "mpi_test_util.h"
#include "sgd/trainer.h"
#include "strategies/strategy.h"

using namespace mpisgd;
using namespace mpisgd::test;

namespace {

std::string separable_file(int rows, unsigned seed) {
  std::mt19937 rng(seed);
  std::ostringstream text;
  for (int r = 0; r < rows; ++r) {
    // Lines of one length, so that every worker reads the same number of rows.
    const int a = 10 + static_cast<int>(rng() % 20), b = 30 + static_cast<int>(rng() % 20);
    text << (a % 2 ? "+1" : "-1") << ' ' << a << ":1 " << b << ":0.5\n";
  }
  return text.str();
}

// Forwards to a strategy, holding rank 0's first step until every other worker has left
// its epoch: the straggler at its most extreme, so the shares the test checks are decided
// by the strategy, not by how the scheduler shares the cores. (ps-sync would wait for
// rank 0 forever, so only ps-async is held.)
class HeldBack final : public ForwardingStrategy {
 public:
  HeldBack(std::unique_ptr<Strategy> inner, int workers) : ForwardingStrategy(std::move(inner)), workers_(workers) {
    MPI_Comm_dup(MPI_COMM_WORLD, &side_);
  }
  ~HeldBack() override { MPI_Comm_free(&side_); }
  HeldBack(const HeldBack&) = delete;
  HeldBack& operator=(const HeldBack&) = delete;

  void refresh(const Dataset& data, std::span<const uint64_t> batch, Weights& w) override {
    wait_for_the_others();
    ForwardingStrategy::refresh(data, batch, w);
  }
  void after_epoch(int epoch, Weights& w) override {
    const int rank = world_rank();
    if (rank > 0 && rank < workers_) MPI_Send(nullptr, 0, MPI_BYTE, 0, 0, side_);
    wait_for_the_others();
    ForwardingStrategy::after_epoch(epoch, w);
  }

 private:
  void wait_for_the_others() {
    if (world_rank() != 0 || released_) return;
    for (int r = 1; r < workers_; ++r) MPI_Recv(nullptr, 0, MPI_BYTE, r, 0, side_, MPI_STATUS_IGNORE);
    released_ = true;
  }

  int workers_;
  MPI_Comm side_ = MPI_COMM_NULL;
  bool released_ = false;
};

// Rows this rank trained on in one epoch of `strategy`; under ps-async rank 0 is held back.
double rows_trained(const std::string& path, const std::string& strategy) {
  const int p = world_size();
  CountedComm comm(MPI_COMM_WORLD);
  LoadOptions load;
  load.readers = p - 1;
  LoadedData d = load_dataset(path, MPI_COMM_WORLD, load);
  to_training_labels(d.data, agree_on_labels(path, d.first_labels, MPI_COMM_WORLD));
  Weights w(d.data.dim, 0, false);
  StrategyContext context{comm, d.data.dim};
  context.step.batch = 5;
  context.train = &d.data;
  std::unique_ptr<Strategy> s = make_strategy(strategy, context);
  if (strategy == "ps-async") s = std::make_unique<HeldBack>(std::move(s), p - 1);
  TrainOptions o;
  o.batch = 5;
  o.progress = false;
  Trainer trainer(d.data, Loss{LossKind::logistic}, w, *s, comm, o);
  return trainer.run_epoch(1).rows;
}

}  // namespace

TEST_CASE("a ps-async epoch shares the rows' pushes among fast and slow workers", "[ps]") {
  const int p = world_size();
  if (p < 3) return;  // two workers at least
  const int workers = p - 1, rows = 100 * workers;
  const std::string path = write_file("ps_async_epoch.svm", separable_file(rows, 1));

  // ps-sync: every worker its own rows.
  const double sync_rows = rows_trained(path, "ps-sync");
  const bool server = world_rank() == p - 1;
  REQUIRE(on_all_ranks(sync_rows == (server ? 0 : 100)));

  const double async_rows = rows_trained(path, "ps-async");
  double total = async_rows, slow = world_rank() == 0 ? async_rows : 0, fastest = world_rank() == 0 ? 0 : async_rows;
  MPI_Allreduce(MPI_IN_PLACE, &total, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  MPI_Allreduce(MPI_IN_PLACE, &slow, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  MPI_Allreduce(MPI_IN_PLACE, &fastest, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  CAPTURE(async_rows, total, slow, fastest);
  // The epoch's pushes, and at most two steps more per worker: the one it pulled for as
  // the last pushes came in, and the one whose answer first says they are in.
  REQUIRE(on_all_ranks(total >= rows && total <= rows + 2 * 5 * workers));
  // The straggler came in after the epoch's pushes: its one or two late steps at most. So
  // a fast worker did more than its own rows.
  REQUIRE(on_all_ranks(slow <= 2 * 5));
  REQUIRE(on_all_ranks(fastest > 100));
  REQUIRE(on_all_ranks(!server || async_rows == 0));
}
