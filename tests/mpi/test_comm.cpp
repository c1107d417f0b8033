// The comm layer under every MPI: reductions that some MPI releases get wrong, failures
// agreed from any subset of ranks, and the library's private communicator.
#include <catch2/catch.hpp>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "collectives/sparse_allreduce.h"
#include "comm/alpha_beta.h"
#include "comm/counted_comm.h"
#include "comm/extrema.h"
#include "comm/job_error.h"
#include "comm/prefix_sum.h"
#include "comm/shared_slots.h"
#include "comm/sum_in_place.h"
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

TEST_CASE("each rank gets the sum of the values of the ranks below it and the total, past 32 bits", "[comm]") {
  const auto rank = static_cast<uint64_t>(world_rank());
  const uint64_t big = uint64_t{5} << 34;
  // Rank r offers big + r: the ranks below it sum to r big + r (r - 1) / 2.
  CHECK(sum_below_rank(MPI_COMM_WORLD, big + rank) == rank * big + rank * (rank - 1) / 2);
  CHECK(sum_below_rank(MPI_COMM_WORLD, 0) == 0);
  const auto size = static_cast<uint64_t>(world_size());
  const RankSums sums = sums_across_ranks(MPI_COMM_WORLD, big + rank);
  CHECK(sums.below == rank * big + rank * (rank - 1) / 2);
  CHECK(sums.total == size * big + size * (size - 1) / 2);
}

TEST_CASE("an array summed in place over the ranks is MPI_Allreduce's sum, in any length and piece size, pairwise or not", "[comm]") {
  const int rank = world_rank(), size = world_size();
  // Lengths shorter than P (empty blocks) and not a multiple of P, blocks of one piece
  // and of several, and the fallback to MPI_Allreduce; values near 2^32 so that sums
  // wrap as MPI_SUM's do. Few pieces in all: MPICH's ranks busy-poll when they outnumber
  // the cores, and each exchange then waits for a time slice.
  const std::pair<size_t, SumInPlace> cases[] = {
      {0, {1}},    {1, {1}},      {3, {1}},       {7, {1}},         {7, {3}},      {100, {3}},
      {1000, {64}}, {65537, {}}, {65537, {4096}}, {1000, {64, 1}}, {0, {64, 1}},
  };
  for (const auto& [n, how] : cases) {
    std::vector<uint32_t> values(n), expected(n);
    for (size_t i = 0; i < n; ++i)
      values[i] = static_cast<uint32_t>(i * 2654435761u + static_cast<size_t>(rank) * 0x9E3779B9u);
    expected = values;
    MPI_Allreduce(MPI_IN_PLACE, expected.data(), static_cast<int>(n), MPI_UINT32_T, MPI_SUM, MPI_COMM_WORLD);
    sum_in_place(values, MPI_COMM_WORLD, how);
    INFO("n = " << n << ", piece = " << how.piece << ", pairwise up to " << how.pairwise_ranks << " ranks, P = " << size);
    CHECK(values == expected);
  }
}

TEST_CASE("blocks gathered in place reach every rank, in any length and piece size", "[comm]") {
  const int rank = world_rank(), size = world_size();
  const std::pair<size_t, size_t> cases[] = {{0, 1}, {1, 1}, {3, 1}, {7, 3}, {100, 3}, {65537, SumInPlace{}.piece}, {65537, 4096}};
  for (const auto& [n, piece] : cases) {
    std::vector<uint32_t> expected(n), values(n, 0);
    for (size_t i = 0; i < n; ++i) expected[i] = static_cast<uint32_t>(i * 2654435761u + 1);
    // Only this rank's block is filled in; the rest holds what must be overwritten.
    for (size_t i = 0; i < n; ++i) values[i] = ~expected[i];
    for (size_t i = block_begin(n, rank, size); i < block_begin(n, rank + 1, size); ++i) values[i] = expected[i];
    gather_blocks_in_place(values, MPI_COMM_WORLD, piece);
    INFO("n = " << n << ", piece = " << piece << ", P = " << size);
    CHECK(values == expected);
  }
}

TEST_CASE("shared slots: each rank reads what every other wrote, where a node's memory may be shared",
          "[comm]") {
  const int rank = world_rank(), size = world_size();
  REQUIRE(shared_window_room(MPI_COMM_WORLD) > 0);  // the tests' ranks share one node
  {
    SharedSlots slots(MPI_COMM_WORLD, 3 * sizeof(int64_t));
    for (int round = 0; round < 2; ++round) {
      const int64_t mine[3] = {rank, round, int64_t{1} << 40};
      std::memcpy(slots.mine(), mine, sizeof(mine));
      slots.publish();
      bool all = true;
      for (int r = 0; r < size; ++r) {
        int64_t theirs[3];
        std::memcpy(theirs, slots.of(r), sizeof(theirs));
        all = all && theirs[0] == r && theirs[1] == round && theirs[2] == int64_t{1} << 40;
      }
      CHECK(on_all_ranks(all));
      slots.publish();  // nobody writes the next round before every rank has read this one
    }
  }
  // A run whose MPI was told to keep a node's messages off shared memory means to
  // measure the network: no shared windows there either.
  for (auto [name, value] : {std::pair{"OMPI_MCA_btl", "tcp,self"}, std::pair{"OMPI_MCA_btl", "^vader"},
                             std::pair{"MPIR_CVAR_NOLOCAL", "1"}}) {
    CAPTURE(name, value);
    const char* had = std::getenv(name);
    const std::optional<std::string> saved = had ? std::optional<std::string>(had) : std::nullopt;
    setenv(name, value, 1);
    CHECK(shared_window_room(MPI_COMM_WORLD) == 0);
    setenv(name, "self,vader,tcp", 1);
    if (std::string(name) == "OMPI_MCA_btl") CHECK(shared_window_room(MPI_COMM_WORLD) > 0);
    if (saved) {
      setenv(name, saved->c_str(), 1);
    } else {
      unsetenv(name);
    }
  }
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

TEST_CASE("the counted communicator counts what leaves a rank and what arrives from others", "[comm]") {
  CountedComm comm(MPI_COMM_WORLD);
  const int rank = comm.rank(), p = comm.size();
  const auto moved = [&](auto exchange) {
    const CommStats before = comm.stats();
    exchange();
    const CommStats d = comm.stats() - before;
    return std::pair(d.bytes_sent, d.bytes_received);
  };
  using Bytes = std::pair<uint64_t, uint64_t>;

  SECTION("a message to oneself stays in memory; one to another rank counts once on each side") {
    std::vector<char> out(100 + rank), in(200);
    CHECK(moved([&] {
            MPI_Request r = comm.isend(out.data(), static_cast<int>(out.size()), MPI_BYTE, rank, 1);
            comm.recv(in.data(), static_cast<int>(in.size()), MPI_BYTE, rank, 1);
            MPI_Wait(&r, MPI_STATUS_IGNORE);
          }) == Bytes{0, 0});
    // A receive posted with room for more counts what came, once its wait completes.
    const int next = (rank + 1) % p, previous = (rank + p - 1) % p;
    if (p > 1)
      CHECK(moved([&] {
              MPI_Request r = comm.irecv_upto(in.data(), static_cast<int>(in.size()), previous, 2);
              MPI_Request s = comm.isend(out.data(), static_cast<int>(out.size()), MPI_BYTE, next, 2);
              comm.wait_received(r);
              MPI_Wait(&s, MPI_STATUS_IGNORE);
            }) == Bytes{out.size(), static_cast<uint64_t>(100 + previous)});
  }
  SECTION("collectives count a bandwidth-optimal algorithm's volume, a broadcast one copy per rank") {
    std::vector<int> counts(p), displs(p);
    for (int r = 0; r < p; ++r) {
      counts[r] = r + 1;
      displs[r] = r * (r + 1) / 2;
    }
    std::vector<float> all(static_cast<size_t>(p * (p + 1) / 2));
    const uint64_t others = (all.size() - counts[rank]) * sizeof(float);
    CHECK(moved([&] { comm.allgatherv(MPI_IN_PLACE, all.data(), counts.data(), displs.data(), MPI_FLOAT); }) ==
          Bytes{others, others});
    const uint64_t copy = all.size() * sizeof(float);
    CHECK(moved([&] { comm.bcast(all.data(), all.size(), 0); }) == (rank == 0 ? Bytes{copy, 0} : Bytes{0, copy}));
    int64_t largest = 0;
    CHECK(moved([&] { largest = comm.max(int64_t{rank}); }) == Bytes{8, 8});
    CHECK(largest == p - 1);
  }
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

TEST_CASE("the network's alpha, beta and gap are measured alike on every rank, over any fan-out", "[comm]") {
  // Fan-outs below P - 1 send to the ranks after each one and receive from those before:
  // a mismatch would hang here. One peer measures no gap: each message is charged a whole
  // alpha then, as Table 3.1 does.
  for (const int fan_out : {1, 2, kGapFanOut}) {
    const AlphaBeta ab = measure_alpha_beta(MPI_COMM_WORLD, fan_out);
    double mine[3] = {ab.alpha, ab.beta, ab.gap}, low[3], high[3];
    MPI_Allreduce(mine, low, 3, MPI_DOUBLE, MPI_MIN, MPI_COMM_WORLD);
    MPI_Allreduce(mine, high, 3, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    for (int i = 0; i < 3; ++i) CHECK(low[i] == high[i]);
    // Timings on shared cores may be anything; what the figures must hold is their bounds.
    CHECK(ab.alpha >= 0);
    CHECK(ab.beta >= 0);
    CHECK(ab.gap >= 0);
    CHECK(ab.gap <= ab.alpha);
    if (world_size() == 2 || fan_out == 1) CHECK(ab.gap == ab.alpha);
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
