#include "comm/alpha_beta.h"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <vector>

namespace mpisgd {
namespace {

// The median of `times` (reordered).
double median(std::vector<double>& times) {
  std::nth_element(times.begin(), times.begin() + static_cast<ptrdiff_t>(times.size() / 2), times.end());
  return times[times.size() / 2];
}

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
  return median(times);
}

// Median time of `reps` exchanges of 8 bytes with each of the `fan_out` ranks that follow
// (sends) and precede (receives) this one, all posted at once.
double fan_out_seconds(MPI_Comm comm, int rank, int size, int fan_out, int reps) {
  std::vector<uint64_t> out(static_cast<size_t>(fan_out)), in(static_cast<size_t>(fan_out));
  std::vector<MPI_Request> requests;
  std::vector<double> times;
  for (int i = 0; i < reps; ++i) {
    MPI_Barrier(comm);
    const double start = MPI_Wtime();
    requests.clear();
    for (int d = 1; d <= fan_out; ++d) {
      const int from = (rank - d + size) % size, to = (rank + d) % size;
      requests.emplace_back();
      MPI_Irecv(&in[static_cast<size_t>(d - 1)], 1, MPI_UINT64_T, from, 1, comm, &requests.back());
      requests.emplace_back();
      MPI_Isend(&out[static_cast<size_t>(d - 1)], 1, MPI_UINT64_T, to, 1, comm, &requests.back());
    }
    MPI_Waitall(static_cast<int>(requests.size()), requests.data(), MPI_STATUSES_IGNORE);
    times.push_back(MPI_Wtime() - start);
  }
  return median(times);
}

}  // namespace

double pair_one_way_seconds(MPI_Comm comm, int bytes, int reps) {
  int rank = 0, size = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  const int partner = rank ^ 1;
  MPI_Barrier(comm);
  return partner < size ? one_way_seconds(comm, partner, rank < partner, bytes, reps) : 0.0;
}

AlphaBeta measure_alpha_beta(MPI_Comm comm, int gap_fan_out) {
  int rank = 0, size = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  double ab[2] = {0, 0};
  const int partner = rank ^ 1;
  const bool paired = partner < size;
  // All pairs run each phase together, behind a barrier. Left to drift apart, one pair's
  // small messages queued behind another's megabyte on a shared link, and alpha, with
  // auto's choice, came out anywhere in a range of 40x under a 1 Gbit/s cap.
  constexpr int kLarge = 1 << 20;
  pair_one_way_seconds(comm, kLarge, 1);  // connection set-up and warm-up
  // The fastest of three medians: a rank descheduled for a few milliseconds (ranks that
  // share a core, a busy host) spoils the round it falls in, not the figure.
  double small = std::numeric_limits<double>::infinity(), large = small;
  for (int round = 0; round < 3; ++round) {
    small = std::min(small, pair_one_way_seconds(comm, 8, 11));
    large = std::min(large, pair_one_way_seconds(comm, kLarge, 3));
  }
  if (paired) {
    ab[0] = small;
    ab[1] = std::max(large - small, 0.0) / kLarge;
  }
  const int fan_out = std::clamp(gap_fan_out, 0, size - 1);
  double all = fan_out > 1 ? std::numeric_limits<double>::infinity() : 0;
  for (int round = 0; fan_out > 1 && round < 3; ++round) all = std::min(all, fan_out_seconds(comm, rank, size, fan_out, 11));
  double measured[3] = {ab[0], ab[1], all};
  MPI_Allreduce(MPI_IN_PLACE, measured, 3, MPI_DOUBLE, MPI_MAX, comm);
  AlphaBeta result{measured[0], measured[1], measured[0]};
  if (fan_out > 1) result.gap = std::clamp((measured[2] - measured[0]) / (fan_out - 1), 0.0, measured[0]);
  return result;
}

}  // namespace mpisgd
