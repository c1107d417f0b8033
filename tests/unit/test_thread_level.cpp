#include <catch2/catch.hpp>
#include <mpi.h>

#include "comm/thread_level.h"

using namespace mpisgd;

TEST_CASE("a thread level below the one needed is named, with the one needed", "[thread_level]") {
  CHECK_FALSE(thread_level_shortfall(MPI_THREAD_FUNNELED, MPI_THREAD_FUNNELED));
  CHECK_FALSE(thread_level_shortfall(MPI_THREAD_FUNNELED, MPI_THREAD_MULTIPLE));
  const auto shortfall = thread_level_shortfall(MPI_THREAD_FUNNELED, MPI_THREAD_SINGLE);
  REQUIRE(shortfall);
  CHECK(*shortfall == "this MPI library grants MPI_THREAD_SINGLE where mpisgd needs MPI_THREAD_FUNNELED; "
                      "use an MPI built with thread support");
  CHECK(thread_level_name(MPI_THREAD_SERIALIZED) == "MPI_THREAD_SERIALIZED");
}
