#pragma once
// `--sync-every auto` for local-sgd (strategies/local_sgd.cpp): how many steps each rank
// takes alone between model averages, from what the run's second average measured (the
// first allocates its buffers and costs several times more).
//
// An average of H steps' changes costs, in the alpha-beta model (thesis section 3.1.1),
// a latency term that does not grow with H (ssar-split-ag's two phases, each posting its
// P - 1 messages at once: 2 (alpha + (P - 2) gap)) plus a volume term that grows at most
// linearly in H (the union of H batches' features: less once the popular ones repeat).
// H steps of compute cost c H. The period is the fewest steps whose average stays within
// kAveragingShare of their compute, latency + v H <= share c H, with v the volume per
// step the average measured; where no H does (v >= share c: the volume alone is
// too dear), the most steps allowed.
//
// The most steps allowed come from accuracy, not cost: fewer averages let the ranks'
// models drift apart. Measured with the default batch and lr (docs/performance.md,
// "local-sgd"), the second epoch's test accuracy: on Webspam-like rows (16k, P = 4, 201
// steps an epoch) 91.4% at H = 4 (50 averages an epoch), 90.3% at H = 16 (13), 89.5% at
// H = 256 (one); on URL-like rows (200k, P = 4, 944 steps) 90.46-90.47% from H = 4 to
// H = 64 (15 averages), 90.39% at H = 256 (4). So at least kLeastAveragesPerEpoch.
#include <cstdint>

#include "comm/alpha_beta.h"

namespace mpisgd {

inline constexpr double kAveragingShare = 0.1;
inline constexpr uint64_t kLeastAveragesPerEpoch = 8;

// What an average of a run measured on one rank.
struct MeasuredAverage {
  uint64_t steps = 0;           // H0: the steps before it
  double compute_seconds = 0;   // of those steps
  double average_seconds = 0;   // the average itself (changes, allreduce, taking the mean)
};

// The most steps between averages: steps_per_epoch / kLeastAveragesPerEpoch, at least 1.
uint64_t most_sync_every(uint64_t steps_per_epoch);

// The latency term of one average over `ranks` ranks.
double average_latency(const AlphaBeta& network, int ranks);

// The period, in [1, most], from a measured average and the latency term.
uint64_t sync_every_from(const MeasuredAverage& measured, double latency_seconds, uint64_t most);

}  // namespace mpisgd
