#include "model/loss.h"

#include <stdexcept>

namespace mpisgd {

LossKind loss_from_name(const std::string& name) {
  if (name == "logreg") return LossKind::logistic;
  if (name == "svm") return LossKind::hinge;
  if (name == "linreg") return LossKind::squared;
  throw std::invalid_argument("unknown model '" + name + "' (logreg, svm, linreg)");
}

const char* model_name(LossKind kind) {
  switch (kind) {
    case LossKind::logistic: return "logreg";
    case LossKind::hinge: return "svm";
    case LossKind::squared: return "linreg";
  }
  return "?";
}

}  // namespace mpisgd
