// core_sharing (comm/core_sharing.h): ranks per core of a node, by which the cost model
// lengthens recursive doubling's lock-step merges.
#include <catch2/catch.hpp>

#include <sched.h>

#include <algorithm>

#include "comm/core_sharing.h"
#include "mpi_test_util.h"

using namespace mpisgd;
using namespace mpisgd::test;

TEST_CASE("core sharing: a node's ranks over the CPUs they may run on", "[core_sharing]") {
  const double sharing = core_sharing(MPI_COMM_WORLD);
  double lowest = sharing, highest = sharing;
  MPI_Allreduce(MPI_IN_PLACE, &lowest, 1, MPI_DOUBLE, MPI_MIN, MPI_COMM_WORLD);
  MPI_Allreduce(MPI_IN_PLACE, &highest, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  CHECK(lowest == highest);
  CHECK(sharing >= 1);

  // The tests run unbound (scripts/mpirun_local.sh: --bind-to none) on one machine: every
  // rank may run on every CPU, so the sharing is simply ranks / CPUs.
  MPI_Comm node;
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
  int node_ranks = 1;
  MPI_Comm_size(node, &node_ranks);
  MPI_Comm_free(&node);
  cpu_set_t mine;
  REQUIRE(sched_getaffinity(0, sizeof(mine), &mine) == 0);
  const int cpus = CPU_COUNT(&mine);
  if (node_ranks == world_size())
    CHECK(on_all_ranks(sharing == std::max(1.0, static_cast<double>(node_ranks) / cpus)));
}
