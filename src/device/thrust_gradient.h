#pragma once
// The batch gradient on a Thrust device: a GPU under CUDA, or the CPU's threads under
// Thrust's OpenMP backend, from one source (thrust_gradient.cu; the model it holds in
// thrust_model.cu). The rows go to the device once; each batch then
//   1. lists the batch's entries (row in batch, feature) and sorts its distinct features,
//   2. gathers those features' K stored weights: on the device where it holds the model
//      (take_model), else on the host, copying them up: U K floats for U distinct features,
//   3. computes each row's K margins (under CUDA a warp a margin, Margins below), then its
//      loss and coefficients scale x f'(m) (model/loss.h, the code the CPU path runs),
//   4. sums each touched weight slot's contributions (in batch order a thread a slot, or
//      as one segmented reduction over the entries, Slots below) and compacts the touched
//      slots into (index, value) pairs, ascending,
// and copies the pairs down into the update stream; or leaves them on the device, for
// the held model's step (compute_and_step) or for the error feedback kept there
// (make_feedback). step() applies a strategy's sum the way Weights does, with the same
// arithmetic (model/step_rule.h), so the model's bits do not depend on where it was
// stepped. Under the OpenMP backend every sum runs in the order the CPU path's one thread
// sums it (a margin over the row's entries, a slot over the batch's rows), so the update
// and the loss equal BatchGradient's at T = 1 bit for bit, whatever the thread count;
// under CUDA they agree to rounding (nvcc contracts multiply-adds, and a warp adds a
// margin's terms, the segmented reduction a slot's, in other orders).
// Rows that do not fit on the device go up batch by batch (Rows::streamed).
// Per batch: O(E log E) device work for E entries (the sort); across the bus U K floats
// up and the update's pairs down with the model on the host; with it on the device the
// pairs down and the sum's pairs up, about k pairs down where top-k selects there, and
// nothing but the losses where one rank steps alone.
#include <cstdint>
#include <memory>
#include <string>

#include "device/batch_device.h"
#include "device/thrust_feedback.h"

namespace mpisgd {

class ThrustGradient : public BatchDevice {
 public:
  // How step 3 sums the margins: one device thread a row, in the CPU path's order (the
  // reference, and all the OpenMP backend runs), or, under CUDA, a warp a margin.
  enum class Margins { by_row, by_warp };
  // Where the rank's rows are: uploaded once, or, where they do not fit beside the batch
  // buffers and the model, each batch's rows copied up for it (a CSR of its own, from the
  // `data` that compute() is given), not overlapped with the kernels.
  enum class Rows { resident, streamed };
  // How step 4 sums the slots: a device thread a slot, walking its entries in batch order
  // (the CPU path's order, the OpenMP backend's default), or a segmented reduction over
  // all the batch's entries (reduce_by_key, CUDA's default): a popular feature's slot has
  // up to an entry per row of the batch, and its thread kept the rest of its warp waiting.
  enum class Slots { by_slot, by_entry };
  static Slots default_slots();

  // Uploads the rows of `data` (CSR, labels) unless they are streamed, for a model of
  // `columns` weight columns; `host_threads` gather the batch's weights from the host's
  // model.
  ThrustGradient(const Dataset& data, uint32_t columns, Margins margins = Margins::by_warp, int host_threads = 1,
                 Rows rows = Rows::resident, Slots slots = default_slots());
  ~ThrustGradient() override;

  BatchLoss compute(const Dataset& data, std::span<const uint64_t> rows, Weights& w, const Loss& loss, float scale,
                    Stream<float>& out) override;
  BatchLoss compute_and_step(const Dataset& data, std::span<const uint64_t> rows, Weights& w, const Loss& loss,
                             float scale, double eta) override;
  bool can_hold_model() const override { return true; }
  void take_model(const Weights& w) override;
  void give_model(Weights& w) override;
  uint64_t step(const Stream<float>& sum, double eta) override;
  DeviceFeedback make_feedback(const SparsifyOptions& options, uint32_t dim) override;
  DeviceRecord traffic() const override;

  // Device bytes a batch of `batch` rows of at most `longest_row` entries needs besides
  // the rows (Dataset::bytes()), in `columns` columns.
  static uint64_t batch_bytes(uint64_t batch, uint64_t longest_row, uint32_t columns);
  // Device bytes of a held model of `dim` weights: v, AdaGrad's sums, and a dense sum on
  // its way to a step.
  static uint64_t model_bytes(uint32_t dim) { return 12 * uint64_t{dim}; }
  // Device bytes of a streamed batch's rows: offsets, entries and labels.
  static uint64_t streamed_bytes(uint64_t batch, uint64_t longest_row) {
    return 8 * (batch + 1) + 8 * batch * longest_row + 4 * batch;
  }

 private:
  struct State;  // the device vectors, in thrust_gradient.cu
  // The batch's update, left on the device as nnz pairs in State::out; adds its loss to
  // `result`. Needs a batch of at least one row.
  uint32_t update_on_device(const Dataset& data, std::span<const uint64_t> rows, const Weights& w, const Loss& loss,
                            float scale, BatchLoss& result);
  // Streamed rows: the batch's rows of `data` up as the device's rows 0 .. B - 1.
  void stream_rows(const Dataset& data, std::span<const uint64_t> rows);
  void copy_update_down(uint32_t nnz, Stream<float>& out);
  // The held model's step with the first `count` pairs of State::out, or with the
  // `count` values of State::dense_in; returns the gradient's non-zeros.
  uint64_t step_held(bool dense, uint32_t count, double eta);

  std::unique_ptr<State> state_;
  bool holding_ = false;  // the model is on the device (take_model .. give_model)
  StepScale held_;        // its step's scalars, driven from here
  // The Weights the model last went back to, and its stamp then: while that state stands
  // (Weights::stamp), the device's copy is still it, and take_model copies nothing up.
  const Weights* given_to_ = nullptr;
  uint64_t given_stamp_ = 0;
  uint32_t columns_;
  int host_threads_;
  Margins margins_;
  Rows rows_;
  Slots slots_;
  DeviceRecord traffic_;
  Stream<float> own_;                // compute_and_step's update
  ThrustFeedback* feedback_ = nullptr;  // the strategy's, once make_feedback made it
};

}  // namespace mpisgd
