#pragma once
// Models in LIBLINEAR's text format, so LIBLINEAR's `predict` reads what we write and we
// read what LIBLINEAR writes:
//   solver_type L2R_LR | L2R_L1LOSS_SVC_DUAL | L2R_L2LOSS_SVR | MCSVM_CS (ours; LIBLINEAR's
//                                    other two-class and regression solvers are read too)
//   nr_class 2                       (or K >= 3)
//   label <positive> <negative>      (classification only; with K >= 3 the K labels in
//                                    the order of the weight columns)
//   nr_feature N
//   bias -1                          (or b >= 0: one more weight row, for a constant feature b)
//   w
//   one weight per line ("%.17g " in LIBLINEAR: a space follows it); with K >= 3 classes
//   (or solver_type MCSVM_CS, read for K >= 3) one line per feature of K weights, one per
//   class, each followed by a space
// The reader is as strict as the LIBSVM parser: every header line above is required (label
// exactly when the solver classifies), in any order, once; every weight is one finite
// number; there are exactly as many weights as the header says.
#include <algorithm>
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
  // nr_feature rows of columns() weights, then the bias's row if bias >= 0; feature-major
  std::vector<double> w;
  Multiclass multiclass = Multiclass::ovr;  // with K >= 3 classes: MCSVM_CS is crammer_singer

  uint32_t columns() const { return classification ? labels.columns() : 1; }
  uint32_t features() const {
    return static_cast<uint32_t>((bias >= 0 ? w.size() - columns() : w.size()) / columns());
  }
  // One column: the decision value.
  double decision(std::span<const uint32_t> index, std::span<const float> value) const {
    double s = bias >= 0 ? w.back() * bias : 0.0;
    for (size_t j = 0; j < index.size() && index[j] < features(); ++j) s += w[index[j]] * value[j];
    return s;
  }
  // The columns() margins of a row (m.size() of them), features the model lacks ignored.
  void margins(std::span<const uint32_t> index, std::span<const float> value, std::span<double> m) const {
    if (m.size() == 1) {
      m[0] = decision(index, value);
      return;
    }
    const size_t k = m.size(), n = features();
    std::fill(m.begin(), m.end(), 0.0);
    for (size_t j = 0; j < index.size() && index[j] < n; ++j)
      for (size_t c = 0; c < k; ++c) m[c] += w[index[j] * k + c] * value[j];
    if (bias >= 0)  // last, as LIBLINEAR adds its bias feature
      for (size_t c = 0; c < k; ++c) m[c] += w[n * k + c] * bias;
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
