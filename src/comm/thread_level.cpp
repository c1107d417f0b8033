#include "comm/thread_level.h"

#include <algorithm>
#include <cstdio>
#include <cstring>

#include <mpi.h>

#include "comm/simulation.h"

namespace mpisgd {

std::string thread_level_name(int level) {
  if (level == MPI_THREAD_SINGLE) return "MPI_THREAD_SINGLE";
  if (level == MPI_THREAD_FUNNELED) return "MPI_THREAD_FUNNELED";
  if (level == MPI_THREAD_SERIALIZED) return "MPI_THREAD_SERIALIZED";
  if (level == MPI_THREAD_MULTIPLE) return "MPI_THREAD_MULTIPLE";
  return "thread level " + std::to_string(level);
}

std::optional<std::string> thread_level_shortfall(int required, int provided) {
  if (provided >= required) return std::nullopt;
  return "this MPI library grants " + thread_level_name(provided) + " where mpisgd needs " +
         thread_level_name(required) + "; use an MPI built with thread support";
}

std::string mpi_granted() {
  char version[MPI_MAX_LIBRARY_VERSION_STRING] = {};
  int length = 0;
  MPI_Get_library_version(version, &length);
  // Up to the NUL (Open MPI counts it in `length`) and the first line's end.
  std::string text(version, strnlen(version, static_cast<size_t>(length)));
  text = text.substr(0, text.find_first_of("\r\n"));
  int level = MPI_THREAD_SINGLE;
  MPI_Query_thread(&level);
  return text + "; " + thread_level_name(level) + " granted";
}

bool init_mpi(int& argc, char**& argv, int required, int wanted) {
  // SMPI grants MPI_THREAD_SINGLE, and a simulated rank runs no thread besides its own
  // (--threads 1 and no watchdog there, both checked at start), so that is enough.
  if constexpr (kSimulated) required = MPI_THREAD_SINGLE;
  int provided = MPI_THREAD_SINGLE;
  MPI_Init_thread(&argc, &argv, std::max(required, wanted), &provided);
  const auto shortfall = thread_level_shortfall(required, provided);
  if (!shortfall) return true;
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank == 0) std::fprintf(stderr, "mpisgd: %s\n", shortfall->c_str());
  MPI_Finalize();
  return false;
}

}  // namespace mpisgd
