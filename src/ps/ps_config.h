#pragma once
// Settings of the parameter-server strategies (ps-sync, ps-async); their flags and checks
// are strategies/parameter_server_family.cpp's.
#include <cstdint>
#include <string>

namespace mpisgd {

struct ParameterServerConfig {
  static constexpr int64_t kUnbounded = -1;

  int servers = 0;                    // --servers S: the last S ranks serve; 0: not given (1)
  bool colocated = false;             // --servers colocated: every rank trains and serves 1/P
  int64_t max_staleness = kUnbounded; // --max-staleness K (ps-async); kUnbounded: not given
  double drop_rate = 0;               // --drop-rate R: pushes and pulls keep the largest 1 - R
  bool overlap = false;               // --overlap: a worker's pushes and pulls on a thread of their own
  uint64_t max_overlap_steps = 4;     // --max-overlap-steps M: steps computed while one is in flight
  // How the servers take a step, the rules model/weights.h applies on every rank for the
  // other strategies, and the batch; the strategy fills them in from the trainer's
  // (--l2, --lr-schedule, --threads and --batch).
  double l2 = 0;
  bool adagrad = false;
  double adagrad_start = 0;
  int threads = 1;
  uint64_t batch = 1;  // rows per worker step, for the shards' expected traffic

  // Ranks that serve and train nothing: none when the servers are co-located.
  int server_ranks() const { return colocated ? 0 : servers ? servers : 1; }
  // Shards of the model: one per rank when co-located.
  int shards(int ranks) const { return colocated ? ranks : server_ranks(); }
};

// Throws std::invalid_argument when `c` runs a second thread that calls MPI beside
// training (--servers colocated, --overlap) and MPI granted `granted` (MPI_Query_thread),
// below MPI_THREAD_MULTIPLE: two threads of a rank then call MPI at the same time.
void check_thread_level(const ParameterServerConfig& c, int granted);

}  // namespace mpisgd
