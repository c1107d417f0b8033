#pragma once
// Latency and inverse bandwidth of the network in the alpha-beta model (thesis section
// 3.1.1: sending L bytes costs alpha + beta L), measured by a short ping-pong.
#include <mpi.h>

namespace mpisgd {

struct AlphaBeta {
  double alpha = 0;  // seconds per message
  double beta = 0;   // seconds per byte
  // Seconds each further message adds when a rank has messages to many ranks in flight
  // at once (non-blocking sends and receives, as the Split phase posts them): LogP's gap.
  // Table 3.1 charges alpha for each of the P-1; posted together, their latencies
  // overlap. At most alpha.
  double gap = 0;
};

// Collective. All ranks ping-pong with a partner at once (rank ^ 1; an odd last rank
// waits), so that beta is the bandwidth a rank gets while every rank communicates, as in
// a collective; on a shared link that is its share. The gap comes from every rank
// exchanging 8 bytes with every other at once: (that time - alpha) / (P - 2). Returns the
// slowest rank's figures, the same on every rank; each is the fastest of three rounds'
// medians. Takes about 80 round trips: milliseconds on a fast network.
AlphaBeta measure_alpha_beta(MPI_Comm comm);

}  // namespace mpisgd
