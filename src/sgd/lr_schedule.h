#pragma once
// Learning-rate schedules, as functions of the global step t (steps are counted the same
// way on every rank) and the number of steps per epoch:
//   constant    eta_t = eta
//   invscaling  eta_t = eta / sqrt(1 + t / steps_per_epoch)  (eta/2 after 3 epochs; tied
//               to epochs rather than steps so it does not change with the batch size)
//   adagrad     eta_t = eta, divided per coordinate inside Weights
#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <string>

namespace mpisgd {

enum class Schedule { constant, invscaling, adagrad };

inline Schedule schedule_from_name(const std::string& name) {
  if (name == "constant") return Schedule::constant;
  if (name == "invscaling") return Schedule::invscaling;
  if (name == "adagrad") return Schedule::adagrad;
  throw std::invalid_argument("unknown learning-rate schedule '" + name + "'");
}

inline double learning_rate(Schedule s, double eta, uint64_t step, uint64_t steps_per_epoch) {
  if (s != Schedule::invscaling) return eta;
  return eta / std::sqrt(1.0 + static_cast<double>(step) / static_cast<double>(steps_per_epoch));
}

}  // namespace mpisgd
