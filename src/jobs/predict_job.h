#pragma once
// `mpisgd predict`: accuracy (classification) or RMSE (regression) of a saved model on a
// dataset, and optionally one prediction per row, in file order, with a logistic model's
// class probabilities as LIBLINEAR's `predict -b 1` writes them. Collective over `comm`.
#include <string>

#include <mpi.h>

namespace mpisgd {

struct PredictConfig {
  std::string model, data, out;
  // --probabilities: "" none; ovr, LIBLINEAR's (each class's sigmoid, normalised: what
  // one-vs-rest models and LIBLINEAR's -s 0 mean); softmax, of the margins (models
  // trained with --multiclass softmax)
  std::string probabilities;
  bool zero_based = false;
  int threads = 1;
  std::string max_memory = "auto";  // data/csr_memory.h
};

void run_predict(const PredictConfig& config, MPI_Comm comm);

}  // namespace mpisgd
