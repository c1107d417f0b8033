#include "device/device_columns.h"

#include <array>

#include <fmt/format.h>

#include "profile/profile_table.h"

namespace mpisgd {

std::vector<std::string> device_profile_columns() {
  return {"device_s_min", "device_s_mean", "device_s_max", "to_device_bytes", "from_device_bytes"};
}

StrategyColumns device_epoch_columns(const DeviceRecord& epoch, MPI_Comm comm) {
  int size = 1;
  MPI_Comm_size(comm, &size);
  const std::array<double, 3> mine = {epoch.seconds, epoch.to_device, epoch.from_device};
  std::array<double, 3> lo{}, hi{}, sum{};
  MPI_Reduce(mine.data(), lo.data(), 3, MPI_DOUBLE, MPI_MIN, 0, comm);
  MPI_Reduce(mine.data(), hi.data(), 3, MPI_DOUBLE, MPI_MAX, 0, comm);
  MPI_Reduce(mine.data(), sum.data(), 3, MPI_DOUBLE, MPI_SUM, 0, comm);
  const MinMeanMax seconds{lo[0], sum[0] / size, hi[0]};
  const double to = sum[1] / size, from = sum[2] / size;
  return {{{"device_s_min", fmt::format("{:.6f}", seconds.min)},
           {"device_s_mean", fmt::format("{:.6f}", seconds.mean)},
           {"device_s_max", fmt::format("{:.6f}", seconds.max)},
           {"to_device_bytes", fmt::format("{:.0f}", to)},
           {"from_device_bytes", fmt::format("{:.0f}", from)}},
          fmt::format("{:>5} device s {} (in compute s), MB per rank to device {:.1f}, from device {:.1f}", "",
                      format_spread(seconds, 1, 3), to / 1e6, from / 1e6)};
}

}  // namespace mpisgd
