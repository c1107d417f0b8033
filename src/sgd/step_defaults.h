#pragma once
// `--batch auto` and `--lr auto`, the defaults: a batch and learning rate derived from the
// data, so that one command trains URL-like rows (mean ||x||^2 about 100) and normalised
// Webspam-like rows (||x||^2 = 1) alike, at any P.
//
// The step is w <- w - eta (1/G) sum over the global batch of G = B x W rows, so one row
// moves w by eta/G times its gradient, and a logistic, hinge or squared loss's gradient
// on row x grows with ||x||^2. Keeping eta/G x mean||x||^2 at a constant c keeps every
// row's step the same whatever the data's scale and whatever P (the linear scaling rule
// of Goyal et al. 2017, which the sparse AllReduce thesis' section 2.2 leaves untuned).
// The global batch aims at 100 rows, where measurements on both kinds of data trained
// best (docs/design.md, "Default step"), but shrinks so that an epoch keeps at least 200
// steps: with few steps an epoch learns little whatever eta is. With W > 1 workers and
// an auto lr it grows towards 100 W, each worker keeping one rank's 100 rows, as far as
// the lr can follow it: past eta = curvature_limit / lambda_max the lr stops growing and
// every larger batch learns less per epoch (URL-like, 200k rows: 1 point below LIBLINEAR
// after 2 epochs at a global 100 or 200, 4 at 400, where the cap binds). Fewer, larger
// steps are what let more workers pay: each step costs an exchange whatever its size.
//
// AdaGrad (Duchi et al. 2011) divides coordinate i's step by sqrt(s0 + G_i), G_i its
// summed squared gradients. From s0 = 0 its first step on a coordinate is eta whatever
// the gradient's size, and on rows of many rare features the rows are learnt by those
// features at once (5-13 points below LIBLINEAR, docs/performance.md#adagrads-auto-step).
// So s0 is a batch's expected squared gradient at the start, the derivative's square
// x mean||x||^2 / G (the variance of a mean of G rows), and the auto eta is the default
// schedule's lr x sqrt(s0): a coordinate's first steps are the default schedule's, and
// its step shrinks once its own squared gradients have added up to about one batch's.
#include <cstdint>
#include <optional>
#include <string>

#include <mpi.h>

#include "data/dataset.h"
#include "model/loss.h"
#include "sgd/lr_schedule.h"

namespace mpisgd {

struct StepRequest {
  std::optional<uint64_t> batch;  // --batch; empty for auto
  std::optional<double> lr;       // --lr; empty for auto
};

struct DataScale {
  uint64_t rows = 0;         // training rows over all ranks
  double mean_sq_norm = 0;   // mean over those rows of ||x||^2
  // The largest curvature of the squared loss over a global batch
  // (sgd/batch_curvature.h); 0 when not measured.
  double batch_curvature = 0;
};

struct ResolvedStep {
  uint64_t batch = 0;  // rows per worker per step
  double lr = 0;
  bool batch_shrunk = false;  // auto batch below its aim, to keep the epoch's steps
  double adagrad_start = 0;   // AdaGrad: the value its per-coordinate sums start at
  std::string why;            // for the start-up log
};

inline constexpr uint64_t kAimedGlobalBatch = 100;
inline constexpr uint64_t kLeastStepsPerEpoch = 200;

// eta x mean||x||^2 / G for each loss, measured (docs/design.md, "Default step").
double step_constant(LossKind loss);

// eta x lambda_max at most, for each loss: the cap on an auto lr once a global batch's rows
// share a direction (DataScale::batch_curvature), measured (docs/design.md, "Default step").
double curvature_limit(LossKind loss);

// The auto global batch of W > 1 workers, given the data's mean ||x||^2 and largest
// curvature: 100 W rows, at most the largest batch whose linear-scaled lr stays under
// the curvature cap, at least 100 (URL-like: 245; Webspam-like rows curve enough that
// their lr is capped at 100 already, so they stay there).
uint64_t grown_global_batch(double mean_sq_norm, double curvature, uint64_t workers, LossKind loss);

// The squared derivative of the loss at w = 0 for a label of unit size: a row's
// gradient at the start is that times ||x||^2 (logistic: 1/2 squared).
double start_derivative_sq(LossKind loss);

// Whether resolve_step would use DataScale::batch_curvature: an auto lr (AdaGrad's eta
// is derived from the default schedule's lr, below).
bool needs_curvature(const StepRequest& request);

// Deterministic: the same request, scale and W give the same step on every rank.
ResolvedStep resolve_step(const StepRequest& request, const DataScale& scale, int workers, LossKind loss,
                          Schedule schedule);

// Collective: rows and mean ||x||^2 over every rank's rows, summed in rank order so the
// result has the same bits on every rank and in every run with the same partition.
DataScale measure_scale(const Dataset& d, MPI_Comm comm);

}  // namespace mpisgd
