#pragma once
// Latency and inverse bandwidth of the network in the alpha-beta model (thesis section
// 3.1.1: sending L bytes costs alpha + beta L), measured by a short ping-pong.
#include <mpi.h>

namespace mpisgd {

struct AlphaBeta {
  double alpha = 0;  // seconds per message
  double beta = 0;   // seconds per byte
};

// Collective. All ranks ping-pong with a partner at once (rank ^ 1; an odd last rank
// waits), so that beta is the bandwidth a rank gets while every rank communicates, as in
// a collective; on a shared link that is its share. Returns the slowest pair's figures,
// the same on every rank. Takes about 20 round trips: milliseconds on a fast network.
AlphaBeta measure_alpha_beta(MPI_Comm comm);

}  // namespace mpisgd
