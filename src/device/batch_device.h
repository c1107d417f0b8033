#pragma once
// Where a rank's mini-batch gradients are computed: on the CPU's threads (BatchGradient,
// device/batch_gradient.h) or on a GPU through Thrust (device/thrust_gradient.h), chosen
// by --device. The model stays on the host, where every strategy steps it and the
// parameter servers write their pulls; a device reads the weights a batch touches for each
// batch and hands back the batch's update as the sorted sparse stream the strategies send
// (docs/design.md, "The GPU path").
#include <cstdint>
#include <span>

#include "data/dataset.h"
#include "model/loss.h"
#include "model/weights.h"
#include "profile/device_record.h"
#include "sparse/stream.h"

namespace mpisgd {

struct BatchLoss {
  double loss_sum = 0;  // sum of the rows' losses at the weights they were computed with
  uint64_t rows = 0;
  uint64_t nnz = 0;  // non-zeros of the update
};

class BatchDevice {
 public:
  virtual ~BatchDevice() = default;

  // The mini-batch gradient of the rows `rows` of `data` (the data the device was made
  // for), u = scale * sum_r f'(w^T x_r, y_r) x_r, as a sparse stream over [0, N) in `out`,
  // however many pairs: the strategy applies its dense switch. w's scratch lane is left
  // zero.
  virtual BatchLoss compute(const Dataset& data, std::span<const uint64_t> rows, Weights& w, const Loss& loss,
                            float scale, Stream<float>& out) = 0;
  // As compute(), then the step of rate eta on w with that update, for a strategy that
  // applies the update as it is (Strategy::passes_through).
  virtual BatchLoss compute_and_step(const Dataset& data, std::span<const uint64_t> rows, Weights& w,
                                     const Loss& loss, float scale, double eta) = 0;
  // What the device has done since it was made; the CPU path reports nothing.
  virtual DeviceRecord traffic() const { return {}; }
};

}  // namespace mpisgd
