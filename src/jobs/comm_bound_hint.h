#pragma once
// A run whose steps mostly wait on exchanges is told so after its first epoch, with the
// strategy that exchanges less often. On a cluster the default's time to accuracy grows
// with P where each step's exchange costs more than the compute it divides
// (docs/scaling.md), and nothing in the profile's columns says what to do about it.
#include <optional>
#include <string>

#include <mpi.h>

#include "profile/epoch_profile.h"

namespace mpisgd {

// The line to log, or nullopt: only where P > 1 ranks each sum their updates at every
// step (`per_step_sum`: a summing strategy), the exchanges took at least half of the
// epoch's wall time (means over the ranks), and no two ranks share a core
// (`core_sharing` <= 1). Where ranks share cores, a rank's time in the exchange is mostly
// its core's other rank computing, which no strategy takes away.
std::optional<std::string> comm_bound_hint(const EpochSummary& epoch, const std::string& strategy,
                                           bool per_step_sum, double core_sharing);

// Collective over `comm` (where `per_step_sum` and P > 1): logs comm_bound_hint's line
// on rank 0, whose summary is the complete one.
void log_comm_bound_hint(const EpochSummary& epoch, const std::string& strategy, bool per_step_sum, MPI_Comm comm);

}  // namespace mpisgd
