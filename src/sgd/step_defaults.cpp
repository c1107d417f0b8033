#include "sgd/step_defaults.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include <fmt/format.h>

namespace mpisgd {

double step_constant(LossKind loss) {
  switch (loss) {
    case LossKind::logistic:
    case LossKind::hinge: return 1.0;
    // The squared loss's gradient grows with the residual too: at 1 it diverged, at 0.5
    // the last iterate still wandered 10% in test RMSE between epochs (digits, P = 4).
    case LossKind::squared: return 0.25;
  }
  return 1.0;
}

double curvature_limit(LossKind loss) {
  switch (loss) {
    // Gradient descent on the batch diverges past 2 / lambda; half of that.
    case LossKind::squared: return 1.0;
    // Bounded gradients oscillate rather than diverge, and the logistic loss curves at most
    // a quarter as much; 20 is where explicit large batches stopped swinging (URL-like
    // global 4000: eta 40 -> 2.5; Webspam-like 1000: eta 1000 -> 43) while the default
    // batch trained as before (Webspam-like global 80: eta 80 -> 42).
    case LossKind::logistic:
    case LossKind::hinge: return 20.0;
  }
  return 1.0;
}

namespace {
// The largest global batch whose linear-scaled lr stays under the curvature cap.
double lr_following_batch(double mean_sq_norm, double curvature, LossKind loss) {
  return curvature_limit(loss) * mean_sq_norm / (step_constant(loss) * curvature);
}
}  // namespace

uint64_t grown_global_batch(double mean_sq_norm, double curvature, uint64_t workers, LossKind loss) {
  const double most = static_cast<double>(kAimedGlobalBatch * workers);
  const double linear = lr_following_batch(mean_sq_norm, curvature, loss);
  return std::max(kAimedGlobalBatch, static_cast<uint64_t>(std::min(most, std::floor(linear))));
}

double start_derivative_sq(LossKind loss) {
  switch (loss) {
    case LossKind::logistic: return 0.25;  // |d/dp log(1 + e^{-yp})| at p = 0 is 1/2
    case LossKind::hinge:
    case LossKind::squared: return 1.0;
  }
  return 1.0;
}

bool needs_curvature(const StepRequest& request) { return !request.lr; }

ResolvedStep resolve_step(const StepRequest& request, const DataScale& scale, int workers, LossKind loss,
                          Schedule schedule) {
  ResolvedStep r;
  const auto w = static_cast<uint64_t>(std::max(workers, 1));
  const double norm = scale.mean_sq_norm > 0 ? scale.mean_sq_norm : 1.0;
  uint64_t aimed_global = kAimedGlobalBatch;
  if (!request.batch && needs_curvature(request) && scale.batch_curvature > 0 && w > 1) {
    aimed_global = grown_global_batch(norm, scale.batch_curvature, w, loss);
    const std::string limit =
        fmt::format("{:.0f} = {} x mean ||x||^2 / ({} x largest curvature), past which the lr stops following it",
                    std::floor(lr_following_batch(norm, scale.batch_curvature, loss)), curvature_limit(loss),
                    step_constant(loss));
    if (aimed_global == kAimedGlobalBatch * w)
      r.why = fmt::format("global batch grown to {} for {} workers, {} each (at most {}); ", aimed_global, w,
                          kAimedGlobalBatch, limit);
    else if (aimed_global > kAimedGlobalBatch)
      r.why = fmt::format("global batch grown to {} for {} workers, short of {} each: at most {}; ", aimed_global, w,
                          kAimedGlobalBatch, limit);
  }
  if (request.batch) {
    r.batch = *request.batch;
  } else {
    // A grown batch is split rounding down, so that the lr still follows it.
    const uint64_t aimed = aimed_global > kAimedGlobalBatch ? aimed_global / w : (aimed_global + w - 1) / w;
    const uint64_t keeps_steps = scale.rows / (kLeastStepsPerEpoch * w);
    r.batch = std::max<uint64_t>(1, std::min(aimed, keeps_steps));
    r.batch_shrunk = r.batch < aimed;
  }
  const double global = static_cast<double>(r.batch * w);
  if (request.lr) {
    r.lr = *request.lr;
  } else {
    r.lr = step_constant(loss) * global / norm;
    r.why += fmt::format("{} x global batch {} / mean ||x||^2 {:.4g}", step_constant(loss), global, norm);
    const double cap = scale.batch_curvature > 0 ? curvature_limit(loss) / scale.batch_curvature : 0;
    if (needs_curvature(request) && cap > 0 && cap < r.lr) {
      r.lr = cap;
      r.why = fmt::format("{} / largest curvature of a global batch {:.4g} (below {})", curvature_limit(loss),
                          scale.batch_curvature, r.why);
    }
  }
  if (schedule == Schedule::adagrad) {
    r.adagrad_start = start_derivative_sq(loss) * norm / global;
    const std::string start = fmt::format("AdaGrad's sums start at {:.4g} = {} x mean ||x||^2 {:.4g} / global batch {}",
                                          r.adagrad_start, start_derivative_sq(loss), norm, global);
    if (request.lr) {
      r.why = start;
    } else {
      const double sgd_lr = r.lr;
      r.lr = sgd_lr * std::sqrt(r.adagrad_start);
      r.why = fmt::format("{}; {}, and eta = {:.4g} x sqrt of that, so that a coordinate's first steps are the "
                          "default schedule's",
                          r.why, start, sgd_lr);
    }
  }
  if (r.batch_shrunk)
    r.why += fmt::format("{}batch {} per worker, below the aimed global {}, so that an epoch of {} rows keeps "
                         "{} steps",
                         r.why.empty() ? "" : "; ", r.batch, aimed_global, scale.rows, kLeastStepsPerEpoch);
  return r;
}

DataScale measure_scale(const Dataset& d, MPI_Comm comm) {
  double sum = 0;
  for (uint64_t i = 0; i < d.nnz(); ++i) sum += static_cast<double>(d.value[i]) * d.value[i];
  int size = 1;
  MPI_Comm_size(comm, &size);
  const double mine[2] = {sum, static_cast<double>(d.rows())};
  std::vector<double> all(2 * static_cast<size_t>(size));
  MPI_Allgather(mine, 2, MPI_DOUBLE, all.data(), 2, MPI_DOUBLE, comm);
  double total = 0, rows = 0;
  for (int r = 0; r < size; ++r) {
    total += all[2 * r];
    rows += all[2 * r + 1];
  }
  return {static_cast<uint64_t>(rows), rows > 0 ? total / rows : 0};
}

}  // namespace mpisgd
