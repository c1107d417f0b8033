#include "model/loss.h"

#include <stdexcept>

namespace mpisgd {

LossKind loss_from_name(const std::string& name) {
  if (name == "logreg") return LossKind::logistic;
  if (name == "svm") return LossKind::hinge;
  if (name == "linreg") return LossKind::squared;
  throw std::invalid_argument("unknown model '" + name + "' (logreg, svm, linreg)");
}

Multiclass multiclass_from_name(const std::string& name) {
  if (name == "ovr") return Multiclass::ovr;
  if (name == "softmax") return Multiclass::softmax;
  if (name == "crammer-singer") return Multiclass::crammer_singer;
  throw std::invalid_argument("unknown multiclass loss '" + name + "' (ovr, softmax, crammer-singer)");
}

const char* multiclass_name(Multiclass form) {
  switch (form) {
    case Multiclass::ovr: return "ovr";
    case Multiclass::softmax: return "softmax";
    case Multiclass::crammer_singer: return "crammer-singer";
  }
  return "?";
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
