#pragma once
// Where a rank's mini-batch gradients are computed: on the CPU's threads (BatchGradient,
// device/batch_gradient.h) or on a GPU through Thrust (device/thrust_gradient.h), chosen
// by --device. The model lives on the host, where the parameter servers write their pulls
// and local SGD averages it; a device hands back each batch's update as the sorted sparse
// stream the strategies send. A device may also hold the model through an epoch and take
// the steps of a strategy that only sums the ranks' updates (SummingStrategy), so that
// the model does not cross to the host and back at each step (docs/design.md, "The GPU
// path").
#include <cstdint>
#include <memory>
#include <span>
#include <stdexcept>
#include <string>

#include "data/dataset.h"
#include "model/loss.h"
#include "model/weights.h"
#include "profile/device_record.h"
#include "sparse/error_feedback.h"
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

  // A device that can hold the model: take_model() copies `w` (v, its scale and AdaGrad's
  // sums) to the device, unless the device still has the state it last gave back to `w`
  // and `w` has not changed since (Weights::stamp); until give_model() writes the
  // device's copy back into `w`, compute() and compute_and_step() read and step that copy
  // and leave `w` alone, and step() takes the step with a strategy's combined sum,
  // returning its non-zeros.
  virtual bool can_hold_model() const { return false; }
  virtual void take_model(const Weights& /*w*/) {}
  virtual void give_model(Weights& /*w*/) {}
  virtual uint64_t step(const Stream<float>& /*sum*/, double /*eta*/) {
    throw std::logic_error("this device does not hold the model");
  }
  // Error feedback kept on a device that holds the model (sparse/feedback.h), for a
  // strategy that selects top-k as `options` ask; none where the device cannot, and why.
  // Once made, compute() hands each batch's update to it where it was computed and returns
  // an empty stream, and the strategy's select() takes it from there.
  struct DeviceFeedback {
    std::unique_ptr<Feedback> feedback;
    std::string why_not;
    bool short_of_memory = false;  // why_not is this rank's GPU, not what the options ask
  };
  virtual DeviceFeedback make_feedback(const SparsifyOptions& /*options*/, uint32_t /*dim*/) {
    return {nullptr, "this device does not hold the model"};
  }

  // What the device has done since it was made; the CPU path reports nothing.
  virtual DeviceRecord traffic() const { return {}; }
};

}  // namespace mpisgd
