#pragma once
// The GPU path's columns of the profile (--device gpu), beside a strategy's own: how long
// the ranks spent in the device's batch calls and moving its held model, and what crossed
// the bus, per epoch.
#include <string>
#include <vector>

#include <mpi.h>

#include "profile/device_record.h"
#include "profile/epoch_profile.h"

namespace mpisgd {

std::vector<std::string> device_profile_columns();

// Collective: the epoch's columns from each rank's record (complete on rank 0).
StrategyColumns device_epoch_columns(const DeviceRecord& epoch, MPI_Comm comm);

}  // namespace mpisgd
