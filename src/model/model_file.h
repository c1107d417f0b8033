#pragma once
// Models in LIBLINEAR's text format, so LIBLINEAR's `predict` reads what we write and we
// read what LIBLINEAR writes:
//   solver_type L2R_LR | L2R_L1LOSS_SVC_DUAL | L2R_L2LOSS_SVR (ours; others are read too)
//   nr_class 2
//   label <positive> <negative>      (classification only)
//   nr_feature N
//   bias -1                          (or b >= 0: one more weight, for a constant feature b)
//   w
//   one weight per line
#include <span>
#include <string>
#include <vector>

#include "data/labels.h"
#include "model/loss.h"

namespace mpisgd {

struct LinearModel {
  bool classification = true;
  LossKind loss = LossKind::logistic;
  LabelMap labels;
  double bias = -1;
  std::vector<double> w;  // nr_feature weights, then the bias weight if bias >= 0

  uint32_t features() const { return static_cast<uint32_t>(bias >= 0 ? w.size() - 1 : w.size()); }
  double decision(std::span<const uint32_t> index, std::span<const float> value) const {
    double s = bias >= 0 ? w.back() * bias : 0.0;
    for (size_t j = 0; j < index.size() && index[j] < features(); ++j) s += w[index[j]] * value[j];
    return s;
  }
};

// Writes `path` through a temporary file renamed once complete. Throws on I/O errors.
void save_model(const std::string& path, const LinearModel& model);
// Throws InputError naming the line on a malformed file.
LinearModel load_model(const std::string& path);

}  // namespace mpisgd
