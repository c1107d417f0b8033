#pragma once
// Taking the step with a collective's result, a stream over [0, N) in either form, read
// where it arrived.
#include <cstdint>

#include "model/weights.h"
#include "sparse/stream.h"

namespace mpisgd {

// Returns the number of non-zeros of the step.
inline uint64_t apply_sum(const Stream<float>& sum, double eta, Weights& w) {
  if (sum.is_dense()) return w.step_dense(eta, sum.values());
  w.step_pairs(eta, sum.pairs());
  return sum.count();
}

}  // namespace mpisgd
