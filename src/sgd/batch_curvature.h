#pragma once
// How sharply the squared loss curves over one global batch: the largest eigenvalue of
// (1/G) sum of x x^T over G rows. Gradient descent on that batch diverges once the step
// exceeds 2 / lambda_max, whatever the rows' norms say. Rows that share no features have
// lambda_max near mean ||x||^2 / G, where the linear scaling rule of step_defaults.h is
// safe; rows that share a direction have lambda_max near mean ||x||^2 itself, G times
// larger, and the scaled step diverges (squared loss) or swings (logistic, hinge: bounded
// gradients). Both generated kinds share one: lambda_max is 0.47 on Webspam-like rows and
// 8-9 on URL-like rows (mean ||x||^2 1 and 100) for any G from 100 to 4000.
#include <cstdint>

#include <mpi.h>

#include "data/dataset.h"

namespace mpisgd {

// Collective. Power iteration (until settled, 30 rounds at most, from the all-ones
// vector) on the first ceil(4 / P) blocks of `global_batch` rows of every rank's part
// (four blocks in the job up to P = 4, one a rank past it), the largest estimate over
// blocks and ranks: deterministic for a partition, and a few batches' worth of work,
// divided among the ranks. The estimate approaches lambda_max from below.
double batch_curvature(const Dataset& d, uint64_t global_batch, MPI_Comm comm);

}  // namespace mpisgd
