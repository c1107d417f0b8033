#pragma once
// Per-epoch profile: what each rank measured, and the summary rank 0 reports.
#include <cstdint>
#include <optional>
#include <string>

#include <mpi.h>

namespace mpisgd {

// A parameter-server rank's own measures of the epoch (Strategy::add_to_record).
struct ParameterServerRecord {
  bool trains = true;   // a worker (a co-located server's rank is both)
  bool serves = false;
  double push_s = 0, pull_s = 0, wait_s = 0;  // a worker's; wait: pulls held by the staleness bound
  double busy = 0;                             // a server's fraction of the epoch spent on messages
  double pushes = 0, staleness_sum = 0, staleness_max = 0;  // a server's, over the pushes it applied
};

// One rank's epoch.
struct EpochRecord {
  double wall_s = 0;     // the training steps of the epoch, start to end
  double compute_s = 0;  // gradients and applying the step
  double comm_s = 0;     // inside the strategy's communication (CountedComm)
  double bytes_sent = 0;
  double bytes_received = 0;
  double density = 0;    // mean over steps of nnz(combined update) / N
  double loss_sum = 0;   // sum of the rows' losses when they were used
  double rows = 0;
  double steps = 0;
  std::optional<ParameterServerRecord> ps;  // parameter-server strategies only
};

struct MinMeanMax {
  double min = 0, mean = 0, max = 0;
};

// Staleness: updates to a shard applied between a worker's pull and its push (0 for ps-sync).
struct ParameterServerSummary {
  int workers = 0, servers = 0;
  MinMeanMax push_s, pull_s, wait_s;  // over the workers
  MinMeanMax busy;                    // over the servers
  double staleness_mean = 0, staleness_max = 0;
};

struct TestResult {
  double loss = 0;
  double metric = 0;  // accuracy (classification) or RMSE (regression)
};

// The epoch over all ranks; complete on rank 0 only.
struct EpochSummary {
  int epoch = 0;
  int ranks = 0;
  uint64_t steps = 0;
  uint64_t rows = 0;
  MinMeanMax wall_s, compute_s, comm_s, bytes_sent, bytes_received;
  double density = 0;
  double train_loss = 0;  // mean over all rows of the loss when each row was used
  std::optional<TestResult> test;
  std::optional<ParameterServerSummary> ps;
};

// Collective: reduces every rank's record onto rank 0.
EpochSummary summarize_epoch(int epoch, const EpochRecord& local, MPI_Comm comm);

}  // namespace mpisgd
