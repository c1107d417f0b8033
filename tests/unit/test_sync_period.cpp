// --sync-every auto (strategies/sync_period.h): the fewest steps whose average stays
// within a tenth of their compute, between 1 and the most that keep 8 averages an epoch.
#include <catch2/catch.hpp>

#include "strategies/sync_period.h"

using namespace mpisgd;

TEST_CASE("the longest auto period keeps 8 averages an epoch", "[sync-period]") {
  CHECK(most_sync_every(1000) == 125);
  CHECK(most_sync_every(1007) == 125);
  CHECK(most_sync_every(7) == 1);
  CHECK(most_sync_every(0) == 1);
}

TEST_CASE("an average's latency term is two phases of P - 1 messages posted together", "[sync-period]") {
  const AlphaBeta network{.alpha = 10e-6, .beta = 1e-9, .gap = 2e-6};
  CHECK(average_latency(network, 1) == 0);
  CHECK(average_latency(network, 2) == Approx(20e-6));
  CHECK(average_latency(network, 6) == Approx(2 * (10e-6 + 4 * 2e-6)));
}

TEST_CASE("the auto period is the fewest steps whose average stays within a tenth of their compute",
          "[sync-period]") {
  // 100 steps of 1 ms each; the average cost 2 ms, 1 ms of it latency: volume 10 us a step
  // against room for 100 us, so latency 1 ms needs 1 ms / 90 us = 11.1 -> 12 steps.
  const MeasuredAverage first{.steps = 100, .compute_seconds = 0.1, .average_seconds = 2e-3};
  CHECK(sync_every_from(first, 1e-3, 125) == 12);
  // At 12 steps the model's average costs 1 ms + 12 x 10 us, within 10% of 12 ms; at 11 not.
  CHECK(1e-3 + 12 * 10e-6 <= 0.1 * 12e-3);
  CHECK(1e-3 + 11 * 10e-6 > 0.1 * 11e-3);
  // No latency: a single step's average is already within the share.
  CHECK(sync_every_from(first, 0, 125) == 1);
  // Capped at the most allowed.
  CHECK(sync_every_from(first, 1e-3, 8) == 8);
}

TEST_CASE("where the volume alone costs more than the share, the period is the longest allowed", "[sync-period]") {
  // 20 us of volume a step against 10% of 100 us.
  const MeasuredAverage first{.steps = 50, .compute_seconds = 5e-3, .average_seconds = 1e-3 + 50 * 20e-6};
  CHECK(sync_every_from(first, 1e-3, 40) == 40);
  // An average measured faster than its latency term leaves only the latency.
  const MeasuredAverage quick{.steps = 50, .compute_seconds = 5e-3, .average_seconds = 1e-6};
  CHECK(sync_every_from(quick, 1e-4, 40) == 10);
  // A first round that measured nothing keeps the longest period.
  CHECK(sync_every_from(MeasuredAverage{}, 1e-4, 40) == 40);
}
