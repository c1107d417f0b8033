#pragma once
// Models in LIBLINEAR's text format, so LIBLINEAR's `predict` reads what we write and we
// read what LIBLINEAR writes:
//   solver_type L2R_LR | L2R_L1LOSS_SVC_DUAL | L2R_L2LOSS_SVR (ours; LIBLINEAR's other
//                                    two-class and regression solvers are read too)
//   nr_class 2
//   label <positive> <negative>      (classification only)
//   nr_feature N
//   bias -1                          (or b >= 0: one more weight, for a constant feature b)
//   w
//   one weight per line ("%.17g " in LIBLINEAR: a space follows it)
// The reader is as strict as the LIBSVM parser: every header line above is required (label
// exactly when the solver classifies), in any order, once; every weight is one finite
// number; there are exactly as many weights as the header says.
#include <cstdint>
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

// Writes `path` through a temporary file renamed once complete, removed if the job is
// terminated meanwhile (comm/temp_files.h). Throws on I/O errors.
void save_model(const std::string& path, const LinearModel& model);
// Throws InputError naming the line on a malformed file, or on one whose weights would not
// fit the memory available now.
LinearModel load_model(const std::string& path);
// As above, with the bytes the weights may take given.
LinearModel load_model(const std::string& path, uint64_t memory_limit);

}  // namespace mpisgd
