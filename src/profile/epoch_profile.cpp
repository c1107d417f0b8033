#include "profile/epoch_profile.h"

#include <array>

namespace mpisgd {

EpochSummary summarize_epoch(int epoch, const EpochRecord& r, MPI_Comm comm) {
  int size = 1;
  MPI_Comm_size(comm, &size);
  const std::array<double, 5> spread = {r.wall_s, r.compute_s, r.comm_s, r.bytes_sent, r.bytes_received};
  std::array<double, 5> lo{}, hi{}, sum{};
  MPI_Reduce(spread.data(), lo.data(), 5, MPI_DOUBLE, MPI_MIN, 0, comm);
  MPI_Reduce(spread.data(), hi.data(), 5, MPI_DOUBLE, MPI_MAX, 0, comm);
  MPI_Reduce(spread.data(), sum.data(), 5, MPI_DOUBLE, MPI_SUM, 0, comm);
  const std::array<double, 2> totals = {r.loss_sum, r.rows};
  std::array<double, 2> total{};
  MPI_Reduce(totals.data(), total.data(), 2, MPI_DOUBLE, MPI_SUM, 0, comm);

  EpochSummary s;
  s.epoch = epoch;
  s.ranks = size;
  s.steps = static_cast<uint64_t>(r.steps);  // the same on every rank
  s.rows = static_cast<uint64_t>(total[1]);
  MinMeanMax* fields[] = {&s.wall_s, &s.compute_s, &s.comm_s, &s.bytes_sent, &s.bytes_received};
  for (size_t i = 0; i < 5; ++i) *fields[i] = {lo[i], sum[i] / size, hi[i]};
  s.density = r.density;  // every rank applied the same combined updates
  s.train_loss = total[1] > 0 ? total[0] / total[1] : 0;
  return s;
}

}  // namespace mpisgd
