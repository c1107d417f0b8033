#pragma once
// Taking the step with a collective's result, a stream over [0, N) in either form.
#include <cstdint>
#include <vector>

#include "model/weights.h"
#include "sparse/stream.h"

namespace mpisgd {

class SumStep {
 public:
  // Returns the number of non-zeros of the step.
  uint64_t apply(const Stream<float>& sum, double eta, Weights& w) {
    if (sum.is_dense()) return w.step_dense(eta, sum.values());
    index_.resize(sum.count());
    value_.resize(sum.count());
    for (size_t j = 0; j < sum.count(); ++j) {
      index_[j] = sum.pairs()[j].index;
      value_[j] = sum.pairs()[j].value;
    }
    w.step_sparse(eta, index_, value_);
    return sum.count();
  }

 private:
  std::vector<uint32_t> index_;  // the sum's pairs, as Weights takes them
  std::vector<float> value_;
};

}  // namespace mpisgd
