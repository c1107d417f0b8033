// The hint after a run's first epoch (jobs/comm_bound_hint.h): only where every step's
// exchange takes most of the epoch and no core is shared.
#include <catch2/catch.hpp>

#include "jobs/comm_bound_hint.h"

using namespace mpisgd;

namespace {

EpochSummary epoch_of(int ranks, double wall_s, double comm_s) {
  EpochSummary s;
  s.epoch = 1;
  s.ranks = ranks;
  s.wall_s = {wall_s, wall_s, wall_s};
  s.comm_s = {comm_s, comm_s, comm_s};
  return s;
}

}  // namespace

TEST_CASE("an epoch mostly spent in a summing strategy's exchanges names local SGD", "[comm-bound-hint]") {
  // The simulated 10 GbE cluster's default at P = 16 (docs/scaling.md): 0.923 of 1.096 s.
  const auto line = comm_bound_hint(epoch_of(16, 1.096, 0.923), "sparse-auto", true, 1);
  REQUIRE(line);
  CHECK_THAT(*line, Catch::Contains("epoch 1: exchanges took 84% of the epoch (0.923 of 1.1 s a rank)"));
  CHECK_THAT(*line, Catch::Contains("one at every step of sparse-auto"));
  CHECK_THAT(*line, Catch::Contains("--strategy local-sgd"));
  // Exactly half is past the line.
  CHECK(comm_bound_hint(epoch_of(2, 1.0, 0.5), "allreduce", true, 1));
}

TEST_CASE("no hint where exchanges are the smaller part, for one rank, shared cores or other strategies",
          "[comm-bound-hint]") {
  // Shared memory, URL-like P = 2: 0.06 of 0.27 s.
  CHECK_FALSE(comm_bound_hint(epoch_of(2, 0.27, 0.06), "sparse-auto", true, 1));
  CHECK_FALSE(comm_bound_hint(epoch_of(2, 1.0, 0.499), "sparse-auto", true, 1));
  CHECK_FALSE(comm_bound_hint(epoch_of(1, 1.0, 0.9), "sparse-auto", true, 1));
  // Two ranks a core: the time in the exchange is mostly the core's other rank computing.
  CHECK_FALSE(comm_bound_hint(epoch_of(4, 0.45, 0.35), "sparse-auto", true, 2));
  // Local SGD and the parameter servers do not sum at every step.
  CHECK_FALSE(comm_bound_hint(epoch_of(16, 1.0, 0.9), "local-sgd", false, 1));
  // An epoch of no steps has no share to speak of.
  CHECK_FALSE(comm_bound_hint(epoch_of(2, 0, 0), "sparse-auto", true, 1));
}
