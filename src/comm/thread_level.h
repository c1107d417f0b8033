#pragma once
// MPI_Init_thread may grant less than it was asked for (an MPI built without thread
// support grants MPI_THREAD_SINGLE); a program that goes on regardless calls MPI from
// threads MPI does not expect. These name the levels and say what is missing.
#include <optional>
#include <string>

namespace mpisgd {

// "MPI_THREAD_FUNNELED" and so on; the number for a level MPI does not define.
std::string thread_level_name(int level);

// The message to end the program with when `provided` is below `required`.
std::optional<std::string> thread_level_shortfall(int required, int provided);

// What this run got: the MPI library's first line of MPI_Get_library_version and the
// thread level it granted, e.g. "Open MPI v4.1.4, ...; MPI_THREAD_FUNNELED granted".
std::string mpi_granted();

// MPI_Init_thread asking for `wanted` (at least `required`); only less than `required`
// is a shortfall. On a shortfall rank 0 prints it, every rank finalizes and the call
// returns false: the program then exits non-zero.
bool init_mpi(int& argc, char**& argv, int required, int wanted = 0);

}  // namespace mpisgd
