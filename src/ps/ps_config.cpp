#include "ps/ps_config.h"

#include <stdexcept>

#include <mpi.h>

#include "comm/simulation.h"
#include "comm/thread_level.h"

namespace mpisgd {

void check_thread_level(const ParameterServerConfig& c, int granted) {
  if (granted >= MPI_THREAD_MULTIPLE) return;
  const std::string needs =
      kSimulated ? ", which needs MPI_THREAD_MULTIPLE; a simulated rank runs one thread"
                 : ", which needs MPI_THREAD_MULTIPLE; this MPI library grants " + thread_level_name(granted) +
                       ": use an MPI built with thread support";
  if (c.colocated)
    throw std::invalid_argument("--servers colocated runs a server thread beside each rank's training" + needs +
                                ", or --servers S");
  if (c.overlap)
    throw std::invalid_argument("--overlap pushes and pulls on a thread beside each worker's training" + needs +
                                ", or leave --overlap out");
}

}  // namespace mpisgd
