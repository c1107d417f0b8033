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

// Peers each rank exchanges with at once to measure the gap: every other rank up to
// P = 17. The gap is a per-message cost and reads the same from a bounded fan-out, while
// an all-to-all's P (P - 1) messages grow to seconds a round on a large job; simulated
// (SimGrid re-solves the bandwidth shares of every flow in flight as each one ends), it
// was 29 s of a 34 s allreduce_bench run at P = 64 and grew 12x with each doubling of P.
inline constexpr int kGapFanOut = 16;

// Collective. The median one-way seconds of `reps` round trips of `bytes` between this
// rank and rank ^ 1, every pair starting together after a barrier; 0 on an odd last rank,
// which has no partner.
double pair_one_way_seconds(MPI_Comm comm, int bytes, int reps);

// Collective. All ranks ping-pong with a partner at once (rank ^ 1; an odd last rank
// waits), so that beta is the bandwidth a rank gets while every rank communicates, as in
// a collective; on a shared link that is its share. The gap comes from every rank
// exchanging 8 bytes with m = min(P - 1, gap_fan_out) others at once (those after it send,
// those before it receive): (that time - alpha) / (m - 1). Returns the slowest rank's
// figures, the same on every rank; each is the fastest of three rounds' medians. Takes
// about 80 round trips: milliseconds on a fast network.
AlphaBeta measure_alpha_beta(MPI_Comm comm, int gap_fan_out = kGapFanOut);

}  // namespace mpisgd
