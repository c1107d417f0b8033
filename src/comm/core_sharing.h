#pragma once
// How many ranks share each core of a node. The summation speed is measured on one core
// undisturbed (sparse/summation_speed.h); when every rank of a node sums at the same
// moment, as in recursive doubling's stages, each sum takes that many times longer.
// Launching more ranks than cores (mpirun --oversubscribe) is how a laptop or a CI
// runner tries 4 or 8 ranks; a cluster job is normally one rank per core: 1.
#include <mpi.h>

namespace mpisgd {

// Collective: the largest, over the nodes, of the node's ranks divided by the CPUs their
// affinity masks allow together; at least 1. The same value on every rank.
double core_sharing(MPI_Comm comm);

// Collective: the fewest CPUs any rank's affinity mask allows; the same on every rank.
// Open MPI's mpirun binds each rank to one core by default when it starts two ranks or
// fewer, so OpenMP threads beyond that share the core.
int fewest_cpus(MPI_Comm comm);

}  // namespace mpisgd
