#pragma once
// Error feedback on a Thrust device (sparse/feedback.h): the residual stays in device
// memory beside the model, each batch's update joins it there (ThrustGradient hands it
// over instead of copying it down), the top-k selection runs there, and only the selected
// pairs cross the bus. It takes the host's steps exactly (sparse/error_feedback.cpp and
// the selectors of sparse/topk_select.h): the same sums in the same order, the same k
// largest with ties to the lower positions, threshold-reuse's same thresholds and band, so
// under Thrust's OpenMP backend it sends what ErrorFeedback sends, bit for bit, and its
// checkpoint state is ErrorFeedback's.
// Selections: exact and threshold-reuse, one weight column (supports() says).
// Cost per step: the exact selection of device/thrust_top_k.h (two passes over the merged
// residual, and sorts of a sample and of about k candidates) where the exact threshold is
// needed (each reuse period's first step, and a reused threshold out of its band), one
// pass otherwise; k pairs down, and what a collective hands back up.
#include <cstdint>
#include <memory>
#include <optional>

#include "sparse/error_feedback.h"
#include "sparse/feedback.h"

namespace mpisgd {

class ThrustFeedback final : public Feedback {
 public:
  // Whether the device can select as `options` ask.
  static bool supports(const SparsifyOptions& options);
  // The device memory it can come to hold over `dim` weights, once every weight carries a
  // residual: the residual, the batch's update and what was handed back (8 bytes a pair
  // each), the two merge buffers (up to residual + update: 16 each), a flag, a position,
  // a sent pair and the selection's four candidate words for each merged value (29), and
  // Thrust's temporaries for a sort of as many (8): 93 bytes a weight.
  static uint64_t bytes_at_most(uint32_t dim);

  ThrustFeedback(const SparsifyOptions& options, uint32_t dim);
  ~ThrustFeedback() override;

  // The coming select()'s update: `count` pairs, ascending, in device memory.
  void take_update(const Pair<float>* device_pairs, uint32_t count);

  uint64_t k() const override { return k_; }
  bool warming_up() const override { return step_ < warmup_steps_; }
  const Stream<float>& select(std::span<const Pair<float>> local) override;
  void take_back(const Stream<float>& dropped) override;
  const SparseVector& residual() const override;
  void save_state(StateWriter& out) const override;
  void load_state(StateReader& in) override;

  // Bytes copied down (the selected pairs) and up (what came back) so far.
  double bytes_down() const { return down_; }
  double bytes_up() const { return up_; }

 private:
  struct State;  // the device vectors, in thrust_feedback.cu
  // Folds what was handed back into the residual.
  void fold_back() const;
  // Keeps exactly the k largest magnitudes of the merged values, ties to the lower
  // positions (their positions, and a flag for each value); returns the k-th magnitude.
  uint32_t keep_exact(uint64_t k);

  std::unique_ptr<State> state_;
  uint64_t k_, warmup_steps_, step_ = 0;
  bool reuse_;  // threshold-reuse, else exact
  uint32_t period_;
  uint64_t selections_ = 0;            // threshold-reuse's calls, as its selector counts them
  std::optional<uint32_t> threshold_;  // threshold-reuse's current threshold
  Stream<float> sent_;
  mutable SparseVector residual_;  // residual(): the device's copy, brought down when asked
  double down_ = 0;
  mutable double up_ = 0;
};

}  // namespace mpisgd
