#include "strategies/sync_period.h"

#include <algorithm>
#include <cmath>

namespace mpisgd {

uint64_t most_sync_every(uint64_t steps_per_epoch) {
  return std::max<uint64_t>(1, steps_per_epoch / kLeastAveragesPerEpoch);
}

double average_latency(const AlphaBeta& network, int ranks) {
  if (ranks < 2) return 0;
  return 2 * (network.alpha + std::max(ranks - 2, 0) * network.gap);
}

uint64_t sync_every_from(const MeasuredAverage& m, double latency_seconds, uint64_t most) {
  if (m.steps == 0 || m.compute_seconds <= 0) return most;
  const double h0 = static_cast<double>(m.steps);
  const double compute_per_step = m.compute_seconds / h0;
  const double volume_per_step = std::max(0.0, m.average_seconds - latency_seconds) / h0;
  const double room = kAveragingShare * compute_per_step - volume_per_step;
  if (room <= 0) return most;
  const double fewest = std::ceil(latency_seconds / room);
  return static_cast<uint64_t>(std::clamp(fewest, 1.0, static_cast<double>(most)));
}

}  // namespace mpisgd
