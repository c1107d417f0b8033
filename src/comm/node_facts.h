#pragma once
// Facts of the node a rank runs on, which the data, model and job layers all size their
// memory by.
#include <cstdint>

#include <mpi.h>

namespace mpisgd {

// The bytes this process may still allocate: the node's MemAvailable, or less where its
// memory cgroup (v2 memory.max, v1 memory.limit_in_bytes) leaves less; 0 when unknown.
uint64_t available_memory();

// Collective over `comm`: how many of its ranks share this rank's node (its memory).
int ranks_on_node(MPI_Comm comm);
// Collective over `comm`: this rank's number among them, 0 .. ranks_on_node - 1.
int rank_on_node(MPI_Comm comm);

}  // namespace mpisgd
