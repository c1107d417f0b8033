#include "profile/epoch_profile.h"

#include <array>

namespace mpisgd {

std::vector<MinMeanMax> spread_over_ranks(std::span<const double> mine, MPI_Comm comm) {
  int size = 1;
  MPI_Comm_size(comm, &size);
  const int n = static_cast<int>(mine.size());
  std::vector<double> lo(mine.size()), hi(mine.size()), sum(mine.size());
  MPI_Reduce(mine.data(), lo.data(), n, MPI_DOUBLE, MPI_MIN, 0, comm);
  MPI_Reduce(mine.data(), hi.data(), n, MPI_DOUBLE, MPI_MAX, 0, comm);
  MPI_Reduce(mine.data(), sum.data(), n, MPI_DOUBLE, MPI_SUM, 0, comm);
  std::vector<MinMeanMax> out(mine.size());
  for (size_t i = 0; i < mine.size(); ++i) out[i] = {lo[i], sum[i] / size, hi[i]};
  return out;
}

EpochSummary summarize_epoch(int epoch, const EpochRecord& r, MPI_Comm comm) {
  int size = 1;
  MPI_Comm_size(comm, &size);
  const std::array<double, 5> mine = {r.wall_s, r.compute_s, r.comm_s, r.bytes_sent, r.bytes_received};
  const std::vector<MinMeanMax> spread = spread_over_ranks(mine, comm);
  const std::array<double, 2> totals = {r.loss_sum, r.rows};
  std::array<double, 2> total{};
  MPI_Reduce(totals.data(), total.data(), 2, MPI_DOUBLE, MPI_SUM, 0, comm);

  EpochSummary s;
  s.epoch = epoch;
  s.ranks = size;
  s.steps = static_cast<uint64_t>(r.steps);  // the same on every rank
  s.rows = static_cast<uint64_t>(total[1]);
  MinMeanMax* fields[] = {&s.wall_s, &s.compute_s, &s.comm_s, &s.bytes_sent, &s.bytes_received};
  for (size_t i = 0; i < 5; ++i) *fields[i] = spread[i];
  s.density = r.density;  // every rank applied the same combined updates
  s.train_loss = total[1] > 0 ? total[0] / total[1] : 0;
  return s;
}

}  // namespace mpisgd
