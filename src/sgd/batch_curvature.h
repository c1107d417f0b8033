#pragma once
// How sharply the squared loss curves over one global batch: the largest eigenvalue of
// (1/G) sum of x x^T over G rows. Gradient descent on that batch diverges once the step
// exceeds 2 / lambda_max, whatever the rows' norms say. Rows of sparse data (URL) share
// few features, so lambda_max is close to mean ||x||^2 / G and the linear scaling rule
// of step_defaults.h is safe; rows that share most of their features (Webspam's
// normalised n-grams) have lambda_max near mean ||x||^2 itself, G times larger, and the
// scaled step diverges. The logistic and hinge losses have bounded gradients, so their
// steps oscillate there instead of diverging and do not need the cap.
#include <cstdint>

#include <mpi.h>

#include "data/dataset.h"

namespace mpisgd {

// Collective. Power iteration (30 rounds, from the all-ones vector) on the first four
// blocks of `global_batch` rows of every rank's part, the largest estimate over blocks
// and ranks: deterministic for a partition, and a few batches' worth of work. The
// estimate approaches lambda_max from below.
double batch_curvature(const Dataset& d, uint64_t global_batch, MPI_Comm comm);

}  // namespace mpisgd
