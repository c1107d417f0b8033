#include "jobs/comm_bound_hint.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "comm/core_sharing.h"

namespace mpisgd {

namespace {
// Past half, the exchanges are the epoch's larger part, which local SGD divides by its
// period; below it, on shared memory (20-30% of a URL-like P = 2 epoch), the default
// reached the target first (docs/performance.md, "Local SGD").
constexpr double comm_bound_share = 0.5;
}  // namespace

std::optional<std::string> comm_bound_hint(const EpochSummary& epoch, const std::string& strategy,
                                           bool per_step_sum, double core_sharing) {
  if (epoch.ranks < 2 || !per_step_sum || core_sharing > 1 || epoch.wall_s.mean <= 0) return std::nullopt;
  const double share = epoch.comm_s.mean / epoch.wall_s.mean;
  if (share < comm_bound_share) return std::nullopt;
  return fmt::format(
      "epoch {}: exchanges took {:.0f}% of the epoch ({:.3g} of {:.3g} s a rank), one at every step of {}; where "
      "their latency rather than their bytes is the cost, --strategy local-sgd, which averages the models every "
      "--sync-every steps, may reach the same accuracy sooner (docs/scaling.md)",
      epoch.epoch, 100 * share, epoch.comm_s.mean, epoch.wall_s.mean, strategy);
}

void log_comm_bound_hint(const EpochSummary& epoch, const std::string& strategy, bool per_step_sum, MPI_Comm comm) {
  int ranks = 1, rank = 0;
  MPI_Comm_size(comm, &ranks);
  MPI_Comm_rank(comm, &rank);
  if (ranks < 2 || !per_step_sum) return;
  const double sharing = core_sharing(comm);
  if (rank != 0) return;
  if (const auto line = comm_bound_hint(epoch, strategy, per_step_sum, sharing)) spdlog::info("{}", *line);
}

}  // namespace mpisgd
