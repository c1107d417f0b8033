// The comm layer under every MPI: reductions that some MPI releases get wrong, failures
// agreed from any subset of ranks, and the library's private communicator.
#include <catch2/catch.hpp>

#include <cstdint>
#include <limits>
#include <optional>

#include "collectives/sparse_allreduce.h"
#include "comm/counted_comm.h"
#include "comm/extrema.h"
#include "comm/job_error.h"
#include "comm/thread_level.h"
#include "mpi_test_util.h"
#include "sparse/stream_sum.h"

using namespace mpisgd;
using namespace mpisgd::test;

TEST_CASE("min and max over ranks hold for values beyond 32 bits and of either sign", "[comm]") {
  const int rank = world_rank(), size = world_size();
  const int64_t big = int64_t{3} << 40;
  CHECK(min_over_ranks(MPI_COMM_WORLD, big + rank) == big);
  CHECK(max_over_ranks(MPI_COMM_WORLD, big + rank) == big + size - 1);
  CHECK(min_over_ranks(MPI_COMM_WORLD, rank == size - 1 ? -7 : std::numeric_limits<int64_t>::max()) == -7);
  CHECK(max_over_ranks(MPI_COMM_WORLD, rank == 0 ? 3'000'000'000 : 3) == 3'000'000'000);
}

TEST_CASE("a failure on any one rank is reported on every rank", "[comm][errors]") {
  // The ranks that did not fail offer the largest order: an MPI that compares unsigned
  // values as signed once made that the smallest, and no rank the one to report.
  for (int failing = 0; failing < world_size(); ++failing) {
    std::optional<LocalFailure> mine;
    if (world_rank() == failing) mine = LocalFailure{0, "rank " + std::to_string(failing) + " failed"};
    REQUIRE_THROWS_WITH(agree_on_error(MPI_COMM_WORLD, mine), "rank " + std::to_string(failing) + " failed");
  }
  std::optional<LocalFailure> later;
  if (world_rank() % 2 == 0) later = LocalFailure{uint64_t{5} << 33, "a later line"};
  if (world_rank() == world_size() - 1) later = LocalFailure{uint64_t{1} << 33, "the earlier line"};
  REQUIRE_THROWS_WITH(agree_on_error(MPI_COMM_WORLD, later), "the earlier line");
  REQUIRE_NOTHROW(agree_on_error(MPI_COMM_WORLD, std::nullopt));
}

TEST_CASE("the library talks on its own duplicate of the caller's communicator", "[comm][collectives]") {
  CountedComm comm(MPI_COMM_WORLD);
  int relation = MPI_UNEQUAL;
  MPI_Comm_compare(comm.raw(), MPI_COMM_WORLD, &relation);
  REQUIRE(relation == MPI_CONGRUENT);

  // An application's wildcard receive on its own communicator takes none of the
  // collective's messages: the collective completes and the receive stays pending.
  int stray = 0;
  MPI_Request request;
  MPI_Irecv(&stray, 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &request);
  const uint32_t n = 1000;
  for (const auto& info : sparse_allreduce_registry<float>()) {
    auto algorithm = make_sparse_allreduce<float>(info.name, comm, n, {});
    const uint32_t index[] = {static_cast<uint32_t>(world_rank()) % n};
    const float value[] = {1};
    Stream<float> input(n);
    encode<float>(index, value, {0, n}, {}, input);
    const Stream<float>& sum = algorithm->allreduce(input);
    CHECK(on_all_ranks(sum.count() > 0));
  }
  int taken = 0;
  MPI_Test(&request, &taken, MPI_STATUS_IGNORE);
  CHECK(on_all_ranks(!taken));
  MPI_Cancel(&request);
  MPI_Wait(&request, MPI_STATUS_IGNORE);
}

TEST_CASE("an algorithm whose dense stream exceeds one MPI message is refused before it is made", "[comm][collectives]") {
  CountedComm comm(MPI_COMM_WORLD);
  const uint32_t n = std::numeric_limits<uint32_t>::max();
  for (const auto& info : sparse_allreduce_registry<float>()) {
    if (info.name == "dense") continue;  // MPI_Allreduce in pieces below 2 GiB: no limit
    REQUIRE_THROWS_MATCHES(make_sparse_allreduce<float>(info.name, comm, n, {}), std::invalid_argument,
                           Catch::Message(info.name + ": N = 4294967295 features make a dense stream larger than "
                                                      "one MPI message (2 GiB); use --strategy allreduce, or "
                                                      "fewer features (--dim)"));
  }
}

TEST_CASE("a run says which MPI library it got and the thread level granted", "[comm]") {
  const std::string granted = mpi_granted();
  CHECK(granted.find('\0') == std::string::npos);
  CHECK(granted.find('\n') == std::string::npos);
  // The tests ask for MPI_THREAD_MULTIPLE and need at least FUNNELED (main.cpp).
  CHECK_THAT(granted, Catch::EndsWith("; MPI_THREAD_FUNNELED granted") ||
                          Catch::EndsWith("; MPI_THREAD_SERIALIZED granted") ||
                          Catch::EndsWith("; MPI_THREAD_MULTIPLE granted"));
}
