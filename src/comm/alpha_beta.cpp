#include "comm/alpha_beta.h"

#include <algorithm>
#include <vector>

namespace mpisgd {
namespace {

// Median one-way time of `reps` round trips of `bytes` with `partner`.
double one_way_seconds(MPI_Comm comm, int partner, bool leader, int bytes, int reps) {
  std::vector<char> buf(static_cast<size_t>(std::max(bytes, 1)));
  std::vector<double> times;
  for (int i = 0; i < reps; ++i) {
    double start = MPI_Wtime();
    if (leader) {
      MPI_Send(buf.data(), bytes, MPI_BYTE, partner, 0, comm);
      MPI_Recv(buf.data(), bytes, MPI_BYTE, partner, 0, comm, MPI_STATUS_IGNORE);
    } else {
      MPI_Recv(buf.data(), bytes, MPI_BYTE, partner, 0, comm, MPI_STATUS_IGNORE);
      MPI_Send(buf.data(), bytes, MPI_BYTE, partner, 0, comm);
    }
    times.push_back((MPI_Wtime() - start) / 2);
  }
  std::nth_element(times.begin(), times.begin() + reps / 2, times.end());
  return times[reps / 2];
}

}  // namespace

AlphaBeta measure_alpha_beta(MPI_Comm comm) {
  int rank = 0, size = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  double ab[2] = {0, 0};
  const int partner = rank ^ 1;
  if (partner < size) {
    constexpr int kLarge = 1 << 20;
    const bool leader = rank < partner;
    one_way_seconds(comm, partner, leader, kLarge, 1);  // connection set-up and warm-up
    const double small = one_way_seconds(comm, partner, leader, 8, 11);
    const double large = one_way_seconds(comm, partner, leader, kLarge, 5);
    ab[0] = small;
    ab[1] = std::max(large - small, 0.0) / kLarge;
  }
  MPI_Allreduce(MPI_IN_PLACE, ab, 2, MPI_DOUBLE, MPI_MAX, comm);
  return {ab[0], ab[1]};
}

}  // namespace mpisgd
