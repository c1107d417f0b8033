#include "ps/ps_profile.h"

#include <array>
#include <limits>

#include <fmt/format.h>

#include "profile/profile_table.h"

namespace mpisgd {
namespace {

// Spreads over the workers, then over the servers.
const char* const kSpreadNames[] = {"push_s", "pull_s", "wait_s", "server_busy"};

std::array<const MinMeanMax*, 4> spreads(const ParameterServerSummary& s) {
  return {&s.push_s, &s.pull_s, &s.wait_s, &s.busy};
}

}  // namespace

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

StrategyColumns to_columns(const ParameterServerSummary& s) {
  StrategyColumns out;
  out.cells = {{"workers", fmt::format("{}", s.workers)}, {"servers", fmt::format("{}", s.servers)}};
  const auto spread = spreads(s);
  for (size_t i = 0; i < spread.size(); ++i) {
    const std::string name = kSpreadNames[i];
    out.cells.emplace_back(name + "_min", fmt::format("{:.9g}", spread[i]->min));
    out.cells.emplace_back(name + "_mean", fmt::format("{:.9g}", spread[i]->mean));
    out.cells.emplace_back(name + "_max", fmt::format("{:.9g}", spread[i]->max));
  }
  out.cells.emplace_back("staleness_mean", fmt::format("{:.9g}", s.staleness_mean));
  out.cells.emplace_back("staleness_max", fmt::format("{:.9g}", s.staleness_max));
  out.table_line = fmt::format(
      "{:>5} {} workers: push s {} pull s {} wait s {} | {} server{} busy {} | staleness mean {:.2f} max {:.0f}", "",
      s.workers, format_spread(s.push_s, 1, 3), format_spread(s.pull_s, 1, 3), format_spread(s.wait_s, 1, 3),
      s.servers, s.servers == 1 ? "" : "s", format_spread(s.busy, 0.01, 0) + "%", s.staleness_mean,
      s.staleness_max);
  return out;
}

std::vector<std::string> parameter_server_columns() {
  std::vector<std::string> names;
  for (const auto& cell : to_columns(ParameterServerSummary{}).cells) names.push_back(cell.first);
  return names;
}

}  // namespace mpisgd
