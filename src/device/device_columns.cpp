#include "device/device_columns.h"

#include <array>

#include <fmt/format.h>

#include "profile/profile_table.h"

namespace mpisgd {

std::vector<std::string> device_profile_columns() {
  return {"device_s_min", "device_s_mean", "device_s_max", "model_trip_s_mean", "to_device_bytes", "from_device_bytes"};
}

StrategyColumns device_epoch_columns(const DeviceRecord& epoch, MPI_Comm comm) {
  const std::array<double, 4> mine = {epoch.seconds, epoch.model_seconds, epoch.to_device, epoch.from_device};
  const std::vector<MinMeanMax> spread = spread_over_ranks(mine, comm);
  const MinMeanMax& seconds = spread[0];
  const double trips = spread[1].mean, to = spread[2].mean, from = spread[3].mean;
  return {{{"device_s_min", fmt::format("{:.6f}", seconds.min)},
           {"device_s_mean", fmt::format("{:.6f}", seconds.mean)},
           {"device_s_max", fmt::format("{:.6f}", seconds.max)},
           {"model_trip_s_mean", fmt::format("{:.6f}", trips)},
           {"to_device_bytes", fmt::format("{:.0f}", to)},
           {"from_device_bytes", fmt::format("{:.0f}", from)}},
          fmt::format("{:>5} device s {} (in compute s), model trips s {:.3f}, MB per rank to device {:.1f}, "
                      "from device {:.1f}",
                      "", format_spread(seconds, 1, 3), trips, to / 1e6, from / 1e6)};
}

}  // namespace mpisgd
