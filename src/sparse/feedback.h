#pragma once
// Error feedback as the top-k strategies use it (sparse/error_feedback.h explains it): on
// the host (ErrorFeedback), or on a device that holds the model and each batch's update
// (device/batch_device.h, BatchDevice::make_feedback), which then sends only the selected
// pairs across the bus. Both keep the same state, so a checkpoint of one loads into the
// other.
#include <cstdint>
#include <span>

#include "sparse/sparse_vector.h"
#include "sparse/stream.h"

namespace mpisgd {

class StateReader;
class StateWriter;

class Feedback {
 public:
  virtual ~Feedback() = default;

  virtual uint64_t k() const = 0;
  // True while the warm-up lasts: the coming select() keeps everything.
  virtual bool warming_up() const = 0;
  // Merges this rank's update into the residual and splits the sum: returns the pairs to
  // send (about k, indices ascending), as a sparse stream over [0, N); the others stay in
  // the residual. Counts a step. The update is `local` on the host; a device's feedback
  // takes it where the device computed it, and `local` is empty.
  virtual const Stream<float>& select(std::span<const Pair<float>> local) = 0;
  // Adds what a collective handed back (a stream over [0, N)) to the residual.
  virtual void take_back(const Stream<float>& dropped) = 0;
  virtual const SparseVector& residual() const = 0;
  // The residual, the step count and the selector's state, for checkpoints.
  virtual void save_state(StateWriter& out) const = 0;
  virtual void load_state(StateReader& in) = 0;
};

}  // namespace mpisgd
