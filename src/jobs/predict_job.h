#pragma once
// `mpisgd predict`: accuracy (classification) or RMSE (regression) of a saved model on a
// dataset, and optionally one prediction per row, in file order. Collective over `comm`.
#include <string>

#include <mpi.h>

namespace mpisgd {

struct PredictConfig {
  std::string model, data, out;
  bool zero_based = false;
  int threads = 1;
  std::string max_memory = "auto";  // data/csr_memory.h
};

void run_predict(const PredictConfig& config, MPI_Comm comm);

}  // namespace mpisgd
