#pragma once
// Per-epoch profile: what each rank measured, and the summary rank 0 reports.
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include <mpi.h>

#include "profile/device_record.h"

namespace mpisgd {

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
  DeviceRecord device;   // --device gpu only
};

struct MinMeanMax {
  double min = 0, mean = 0, max = 0;
};

// A strategy's own columns of one epoch's profile (Strategy::epoch_columns): each
// column's name and its value as the profile writes it, and a line for the terminal
// table, printed under the epoch's row (empty: none), so every strategy's table keeps the
// common columns.
struct StrategyColumns {
  std::vector<std::pair<std::string, std::string>> cells;
  std::string table_line;
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
  StrategyColumns strategy;
};

// Collective: the min, mean and max over the ranks of each of `mine` (the same count on
// every rank), complete on rank 0.
std::vector<MinMeanMax> spread_over_ranks(std::span<const double> mine, MPI_Comm comm);

// Collective: reduces every rank's record onto rank 0.
EpochSummary summarize_epoch(int epoch, const EpochRecord& local, MPI_Comm comm);

}  // namespace mpisgd
