#pragma once
// Minimum and maximum over the ranks of `comm`, always on signed 64-bit integers.
// MPI_MIN and MPI_MAX on unsigned types are computed as signed by some MPI releases:
// MPICH 4.0.2 for every unsigned type (pmodels/mpich#6083: MIN(42, ULLONG_MAX) gives
// ULLONG_MAX) and Open MPI 4.1.4 for MPI_UNSIGNED_LONG (open-mpi/ompi#10648). Every
// min/max reduction of an integer goes through these, so none depends on that bug.
#include <cstdint>

#include <mpi.h>

namespace mpisgd {

int64_t min_over_ranks(MPI_Comm comm, int64_t value);
int64_t max_over_ranks(MPI_Comm comm, int64_t value);

}  // namespace mpisgd
