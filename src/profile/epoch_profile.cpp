#include "profile/epoch_profile.h"

#include <array>
#include <limits>

namespace mpisgd {

namespace {

// Workers report push, pull and wait times, servers their busy fraction: each spread is
// over the ranks of that role only, the others offering values that lose every reduction.
ParameterServerSummary summarize_parameter_server(const ParameterServerRecord& r, MPI_Comm comm) {
  constexpr double kInf = std::numeric_limits<double>::infinity();
  const std::array<double, 4> mine = {r.push_s, r.pull_s, r.wait_s, r.busy};
  const std::array<bool, 4> counted = {r.trains, r.trains, r.trains, r.serves};
  std::array<double, 4> lo{}, hi{}, sum{}, lo_all{}, hi_all{}, sum_all{};
  for (size_t i = 0; i < 4; ++i) {
    lo[i] = counted[i] ? mine[i] : kInf;
    hi[i] = counted[i] ? mine[i] : -kInf;
    sum[i] = counted[i] ? mine[i] : 0;
  }
  MPI_Allreduce(lo.data(), lo_all.data(), 4, MPI_DOUBLE, MPI_MIN, comm);
  MPI_Allreduce(hi.data(), hi_all.data(), 4, MPI_DOUBLE, MPI_MAX, comm);
  MPI_Allreduce(sum.data(), sum_all.data(), 4, MPI_DOUBLE, MPI_SUM, comm);
  // Ranks per role, pushes and their summed staleness; then the largest staleness.
  const std::array<double, 4> totals = {r.trains ? 1.0 : 0.0, r.serves ? 1.0 : 0.0, r.pushes, r.staleness_sum};
  std::array<double, 4> total{};
  MPI_Allreduce(totals.data(), total.data(), 4, MPI_DOUBLE, MPI_SUM, comm);
  double stale_max = 0;
  MPI_Allreduce(&r.staleness_max, &stale_max, 1, MPI_DOUBLE, MPI_MAX, comm);

  ParameterServerSummary s;
  s.workers = static_cast<int>(total[0]);
  s.servers = static_cast<int>(total[1]);
  MinMeanMax* fields[] = {&s.push_s, &s.pull_s, &s.wait_s, &s.busy};
  const double ranks[] = {total[0], total[0], total[0], total[1]};
  for (size_t i = 0; i < 4; ++i)
    if (ranks[i] > 0) *fields[i] = {lo_all[i], sum_all[i] / ranks[i], hi_all[i]};
  s.staleness_mean = total[2] > 0 ? total[3] / total[2] : 0;
  s.staleness_max = stale_max;
  return s;
}

}  // namespace

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
  if (r.ps) s.ps = summarize_parameter_server(*r.ps, comm);
  return s;
}

}  // namespace mpisgd
