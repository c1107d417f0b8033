// ps-async's epoch is the rows' worth of pushes from all workers together: a straggler
// (--slow-rank) does fewer of them and the others go round their rows again, instead of
// everyone waiting for it as ps-sync does.
#include <catch2/catch.hpp>

#include <random>
#include <sstream>

#include "data/labels.h"
#include "data/load_dataset.h"
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

// Rows this rank trained on in one epoch of `strategy`, rank 0 slowed 5x.
double rows_trained(const std::string& path, const std::string& strategy) {
  const int p = world_size();
  CountedComm comm(MPI_COMM_WORLD);
  LoadOptions load;
  load.readers = p - 1;
  LoadedData d = load_dataset(path, MPI_COMM_WORLD, load);
  to_signs(d.data, agree_on_labels(path, d.first_labels, MPI_COMM_WORLD));
  Weights w(d.data.dim, 0, false);
  StrategyContext context{comm, d.data.dim};
  context.ps.batch = 5;
  context.train = &d.data;
  auto s = make_strategy(strategy, context);
  TrainOptions o;
  o.batch = 5;
  o.progress = false;
  o.slow_rank = 0;
  o.slow_factor = 5;
  Trainer trainer(d.data, Loss{LossKind::logistic}, w, *s, comm, o);
  return trainer.run_epoch(1).rows;
}

}  // namespace

TEST_CASE("a ps-async epoch shares the rows' pushes among fast and slow workers", "[ps]") {
  const int p = world_size();
  if (p < 3) return;  // two workers at least
  const int workers = p - 1, rows = 100 * workers;
  const std::string path = write_file("ps_async_epoch.svm", separable_file(rows, 1));

  // ps-sync: every worker its own rows, the slow one included.
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
  // The straggler did less than its share, so a fast worker did more than its own rows.
  REQUIRE(on_all_ranks(slow < 100));
  REQUIRE(on_all_ranks(fastest > 100));
  REQUIRE(on_all_ranks(!server || async_rows == 0));
}
