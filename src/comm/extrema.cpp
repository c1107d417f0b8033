#include "comm/extrema.h"

namespace mpisgd {

int64_t min_over_ranks(MPI_Comm comm, int64_t value) {
  int64_t result = 0;
  MPI_Allreduce(&value, &result, 1, MPI_INT64_T, MPI_MIN, comm);
  return result;
}

int64_t max_over_ranks(MPI_Comm comm, int64_t value) {
  int64_t result = 0;
  MPI_Allreduce(&value, &result, 1, MPI_INT64_T, MPI_MAX, comm);
  return result;
}

}  // namespace mpisgd
