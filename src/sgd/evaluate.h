#pragma once
// Loss and accuracy (classification) or RMSE (regression) of a model over a partitioned
// dataset with raw labels. Collective: every rank gets the global result. Sums go per
// thread over fixed row blocks, then in thread and rank order, so results repeat exactly.
// With K >= 3 classes a row is right when its largest margin is its label's column; a
// row whose label the model lacks is wrong, and left out of the mean loss (it has none).
#include <cmath>
#include <cstdint>
#include <span>
#include <vector>

#include <mpi.h>
#include <omp.h>

#include "comm/wait_board.h"
#include "data/dataset.h"
#include "data/labels.h"
#include "model/loss.h"
#include "profile/epoch_profile.h"

namespace mpisgd {

struct Evaluation {
  TestResult result;
  uint64_t rows = 0;
  uint64_t correct = 0;  // classification only
};

// `margins(index, value, m)` writes a row's loss.columns margins into m.
template <class Margins>
Evaluation evaluate(const Dataset& d, const Loss& loss, const LabelMap& labels, int threads, MPI_Comm comm,
                    Margins margins) {
  const int nt = std::max(1, threads);
  std::vector<double> loss_part(static_cast<size_t>(nt)), error_part(static_cast<size_t>(nt)),
      unknown_part(static_cast<size_t>(nt));
  const uint64_t rows = d.rows();
#pragma omp parallel num_threads(nt)
  {
    const int t = omp_get_thread_num(), n = omp_get_num_threads();
    double l = 0, e = 0, unknown = 0;
    std::vector<double> m(loss.columns);
    for (uint64_t r = rows * t / n; r < rows * (t + 1) / n; ++r) {
      margins(d.row_index(r), d.row_value(r), std::span<double>(m));
      const double p = m[0];
      if (loss.columns > 1) {
        const int64_t y = labels.column_of(d.label[r]);
        if (y < 0) {
          ++unknown;
          continue;
        }
        l += loss.value(m, static_cast<uint32_t>(y));
        e += Loss::argmax(m) == static_cast<uint64_t>(y) ? 1 : 0;
      } else if (loss.classification()) {
        l += loss.value(p, labels.sign(d.label[r]));
        e += labels.label_of(p) == d.label[r] ? 1 : 0;
      } else {
        l += loss.value(p, d.label[r]);
        e += (p - d.label[r]) * (p - d.label[r]);
      }
    }
    loss_part[static_cast<size_t>(t)] = l;
    error_part[static_cast<size_t>(t)] = e;
    unknown_part[static_cast<size_t>(t)] = unknown;
  }
  double local[4] = {0, 0, static_cast<double>(rows), 0}, global[4];
  for (int t = 0; t < nt; ++t) {
    local[0] += loss_part[static_cast<size_t>(t)];
    local[1] += error_part[static_cast<size_t>(t)];
    local[3] += unknown_part[static_cast<size_t>(t)];
  }
  {
    WaitScope waiting("the test evaluation");
    MPI_Allreduce(local, global, 4, MPI_DOUBLE, MPI_SUM, comm);
  }
  Evaluation ev;
  ev.rows = static_cast<uint64_t>(global[2]);
  double n = std::max(1.0, global[2]);
  ev.result.loss = global[0] / std::max(1.0, global[2] - global[3]);
  if (loss.classification()) {
    ev.correct = static_cast<uint64_t>(global[1]);
    ev.result.metric = global[1] / n;
  } else {
    ev.result.metric = std::sqrt(global[1] / n);
  }
  return ev;
}

}  // namespace mpisgd
