#pragma once
// The parameter servers' columns of the profile (Strategy::profile_columns): how the
// ranks split into workers and servers, a worker's push, pull and wait times, a server's
// busy fraction, and the staleness of the pushes the servers applied.
#include <string>
#include <vector>

#include <mpi.h>

#include "profile/epoch_profile.h"

namespace mpisgd {

// A parameter-server rank's own measures of the epoch.
struct ParameterServerRecord {
  bool trains = true;   // a worker (a co-located server's rank is both)
  bool serves = false;
  double push_s = 0, pull_s = 0, wait_s = 0;  // a worker's; wait: pulls held by the staleness bound
  double busy = 0;                             // a server's fraction of the epoch spent on messages
  double pushes = 0, staleness_sum = 0, staleness_max = 0;  // a server's, over the pushes it applied
};

// Staleness: updates to a shard applied between a worker's pull and its push (0 for ps-sync).
struct ParameterServerSummary {
  int workers = 0, servers = 0;
  MinMeanMax push_s, pull_s, wait_s;  // over the workers
  MinMeanMax busy;                    // over the servers
  double staleness_mean = 0, staleness_max = 0;
};

// Collective over `comm`: every rank's record, summarized on every rank.
ParameterServerSummary summarize_parameter_server(const ParameterServerRecord& r, MPI_Comm comm);

// The columns' cells as the profile writes them, and the line under the table's row.
StrategyColumns to_columns(const ParameterServerSummary& s);
// Their names, in that order.
std::vector<std::string> parameter_server_columns();

}  // namespace mpisgd
