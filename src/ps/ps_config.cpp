#include "ps/ps_config.h"

#include <stdexcept>

#include <mpi.h>

#include "comm/thread_level.h"

namespace mpisgd {

bool is_parameter_server(const std::string& strategy) { return strategy == "ps-sync" || strategy == "ps-async"; }

void check_parameter_server(const std::string& strategy, const ParameterServerConfig& c, int ranks) {
  if (!is_parameter_server(strategy)) {
    if (c.servers || c.colocated)
      throw std::invalid_argument("--servers is for --strategy ps-sync or ps-async, not " + strategy);
    if (c.max_staleness != ParameterServerConfig::kUnbounded)
      throw std::invalid_argument("--max-staleness is for --strategy ps-async, not " + strategy);
    if (c.drop_rate != 0) throw std::invalid_argument("--drop-rate is for --strategy ps-sync or ps-async, not " + strategy);
    if (c.overlap) throw std::invalid_argument("--overlap is for --strategy ps-sync or ps-async, not " + strategy);
    return;
  }
  if (strategy == "ps-sync" && c.max_staleness != ParameterServerConfig::kUnbounded)
    throw std::invalid_argument("--max-staleness bounds ps-async; ps-sync never runs ahead (it is ps-async with 0)");
  if (c.max_staleness < ParameterServerConfig::kUnbounded)
    throw std::invalid_argument("--max-staleness must be 0 or more steps");
  if (!(c.drop_rate >= 0 && c.drop_rate < 1))
    throw std::invalid_argument("--drop-rate is the fraction of each update left out: it must be in [0, 1)");
  if (c.servers < 0) throw std::invalid_argument("--servers must be at least 1");
  if (!c.colocated && c.server_ranks() >= ranks)
    throw std::invalid_argument("--servers " + std::to_string(c.server_ranks()) + " leaves no rank to train on " +
                                std::to_string(ranks) + " rank" + (ranks == 1 ? "" : "s") +
                                ": run at least " + std::to_string(c.server_ranks() + 1) + " ranks");
}

void check_thread_level(const ParameterServerConfig& c, int granted) {
  if (granted >= MPI_THREAD_MULTIPLE) return;
  const std::string needs = ", which needs MPI_THREAD_MULTIPLE; this MPI library grants " +
                            thread_level_name(granted) + ": use an MPI built with thread support";
  if (c.colocated)
    throw std::invalid_argument("--servers colocated runs a server thread beside each rank's training" + needs +
                                ", or --servers S");
  if (c.overlap)
    throw std::invalid_argument("--overlap pushes and pulls on a thread beside each worker's training" + needs +
                                ", or leave --overlap out");
}

int training_ranks(const std::string& strategy, const ParameterServerConfig& c, int ranks) {
  return is_parameter_server(strategy) ? ranks - c.server_ranks() : ranks;
}

}  // namespace mpisgd
