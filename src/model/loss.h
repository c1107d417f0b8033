#pragma once
// The three losses of MPI-SGD (thesis section 2.2), on the prediction p = w^T x and the
// target y (y in {-1,+1} for classification, real for regression):
//   logistic  f(p) = ln(1 + exp(-y p))       f'(p) = -y / (1 + exp(y p))
//   hinge     f(p) = max(0, 1 - y p)         f'(p) = -y if y p < 1, else 0
//   squared   f(p) = (p - y)^2 / 2           f'(p) = p - y
// The gradient of a row x is f'(p) x, as sparse as the row itself.
#include <cmath>
#include <string>

namespace mpisgd {

enum class LossKind { logistic, hinge, squared };

struct Loss {
  LossKind kind;

  bool classification() const { return kind != LossKind::squared; }

  double value(double p, double y) const {
    switch (kind) {
      case LossKind::logistic: {
        double z = y * p;  // ln(1 + e^-z) without overflow for large |z|
        return z > 0 ? std::log1p(std::exp(-z)) : -z + std::log1p(std::exp(z));
      }
      case LossKind::hinge: return std::max(0.0, 1 - y * p);
      case LossKind::squared: return 0.5 * (p - y) * (p - y);
    }
    return 0;
  }

  double derivative(double p, double y) const {
    switch (kind) {
      case LossKind::logistic: {
        double z = y * p;
        if (z > 0) {
          double e = std::exp(-z);
          return -y * e / (1 + e);
        }
        return -y / (1 + std::exp(z));
      }
      case LossKind::hinge: return y * p < 1 ? -y : 0.0;
      case LossKind::squared: return p - y;
    }
    return 0;
  }
};

// Names used on the command line: logreg, svm, linreg.
LossKind loss_from_name(const std::string& name);
const char* model_name(LossKind kind);

}  // namespace mpisgd
