#pragma once
// The arithmetic of one SGD step on w = scale * v (model/weights.h explains the form),
// apart from where v is kept: the host's Weights and a device that holds the model
// (device/thrust_gradient.h) both take their steps with it, so both step to the same bits.
#include <cmath>
#include <stdexcept>

#include "model/host_device.h"

namespace mpisgd {

// The step's scalars, kept where the step is driven (on the host).
struct StepScale {
  // Below this the float v would grow large enough to lose precision against scale.
  static constexpr double kRenormaliseBelow = 1e-6;

  double scale = 1;
  double l2 = 0;
  double coef = 0;  // eta / scale of the current step

  // Folds the step's decay into scale; the coordinates then take coef's share.
  void begin(double eta) {
    const double decay = 1 - eta * l2;
    if (decay <= 0) throw std::invalid_argument("learning rate x l2 must stay below 1");
    scale *= decay;
    coef = eta / scale;
  }
  // After a step: true when v must take scale into itself (v_i = float(v_i scale),
  // scale = 1), which is rare and deterministic.
  bool needs_renormalising() const { return scale < kRenormaliseBelow; }
};

// Coordinate i's share of the step with gradient g: plain SGD, or AdaGrad's (Duchi et al.
// 2011) when `sum_sq` points at i's summed squared gradients.
MPISGD_HD inline void step_coordinate(float& v, float* sum_sq, float g, double coef) {
  if (sum_sq) {
    *sum_sq += g * g;
    v -= static_cast<float>(coef * g / (std::sqrt(static_cast<double>(*sum_sq)) + 1e-8));
  } else {
    v -= static_cast<float>(coef * g);
  }
}

}  // namespace mpisgd
