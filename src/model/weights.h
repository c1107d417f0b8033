#pragma once
// The weight vector w in R^N, kept as w = scale * v.
//
// One SGD step with learning rate eta on  F(w) = mean_i f_i(w) + (lambda/2) ||w||^2  is
//   w <- (1 - eta lambda) w - eta g        (g: the mean data gradient of the step)
// The decay touches every coordinate; folding it into `scale` (scale *= 1 - eta lambda,
// v -= eta/scale g) makes a step whose g has k non-zeros cost O(k), so sparse updates
// stay sparse. v is renormalised when scale gets small, which is rare and deterministic.
//
// With Adagrad (Duchi et al. 2011) each coordinate's step is divided by the root of its
// summed squared gradients, G_i += g_i^2 from a start s0 (sgd/step_defaults.h), v_i -=
// eta/scale g_i / (sqrt(G_i) + eps), and L2 acts as decoupled weight decay (the same
// scale factor), which keeps steps O(k) as well.
//
// Each weight shares its 8-byte slot with a float of scratch space, in which BatchGradient
// sums the mini-batch gradient: the accumulation right after a row's dot product then
// hits the cache lines the dot product just brought in (per-sample SGD's dot+axpy
// locality, kept for mini-batches). Scratch is zero between batches.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <span>
#include <vector>

#include "data/big_array.h"
#include "model/step_rule.h"
#include "model/zeroed_array.h"
#include "sparse/stream.h"

namespace mpisgd {

class StateReader;
class StateWriter;

class Weights {
 public:
  // `threads` OpenMP threads apply large steps (each index is independent of the others).
  // With AdaGrad its sums start at `adagrad_start`.
  Weights(uint32_t dim, double l2, bool adagrad, int threads = 1, float adagrad_start = 0);

  uint32_t dim() const { return static_cast<uint32_t>(slots_.size()); }

  // w^T x for a row whose indices are all < dim (training data).
  double dot(std::span<const uint32_t> index, std::span<const float> value) const {
    double s = 0;
    for (size_t j = 0; j < index.size(); ++j) s += static_cast<double>(slots_[index[j]].v) * value[j];
    return s * step_.scale;
  }
  // Always inlined, as GCC 12 drops out-of-line calls that only prefetch.
  [[gnu::always_inline]] void prefetch(std::span<const uint32_t> index) const {
    for (uint32_t i : index) __builtin_prefetch(&slots_[i]);
  }
  // w^T x ignoring features the model has not seen (test data may have more).
  double dot_known(std::span<const uint32_t> index, std::span<const float> value) const;

  // The margins m_c = w_c^T x of a row, for weights kept in K = m.size() columns,
  // feature-major (column c of feature i in slot i K + c, so a row's K weights of a
  // feature share cache lines): each summed in the order dot() sums, so column c of a
  // one-vs-rest model computes what a binary model of that class would, bit for bit.
  void margins(std::span<const uint32_t> index, std::span<const float> value, std::span<double> m) const {
    const size_t k = m.size();
    std::fill(m.begin(), m.end(), 0.0);
    for (size_t j = 0; j < index.size(); ++j) {
      const Slot* s = &slots_[size_t{index[j]} * k];
      for (size_t c = 0; c < k; ++c) m[c] += static_cast<double>(s[c].v) * value[j];
    }
    for (double& x : m) x *= step_.scale;
  }
  // As margins(), ignoring features the model has not seen; with one column, dot_known().
  void margins_known(std::span<const uint32_t> index, std::span<const float> value, std::span<double> m) const;

  // One step with the global mean gradient g, as sorted sparse pairs or dense; the dense
  // form returns the number of non-zeros of g.
  void step_sparse(double eta, std::span<const uint32_t> index, std::span<const float> g);
  uint64_t step_dense(double eta, std::span<const float> g);
  // As step_sparse, on a collective's sum as it arrived (sparse/stream.h), not copied out.
  void step_pairs(double eta, std::span<const Pair<float>> g);

  // The same step taken entry by entry, for a gradient summed in the scratch lane:
  // begin_step, then step_scratch(i) for each index the gradient touches (from any
  // thread, each index once), then end_step. It applies scratch(i) and zeroes it.
  void begin_step(double eta);
  void step_scratch(uint32_t i) {
    const float g = slots_[i].scratch;
    slots_[i].scratch = 0;
    update(i, g);
  }
  void end_step();

  double weight(uint32_t i) const { return step_.scale * slots_[i].v; }
  // w_i = scale() * stored(i): a device that gathers the stored values and scales its dot
  // products as dot() does computes the same margins, bit for bit.
  float stored(uint32_t i) const { return slots_[i].v; }
  double scale() const { return step_.scale; }
  float& scratch(uint32_t i) { return slots_[i].scratch; }
  std::vector<double> values() const;
  // Hash of the exact bits of the state, to check that every rank holds the same model.
  uint64_t hash() const;

  // Model averaging (local SGD, strategies/local_sgd.cpp): every rank takes every step,
  // so all share `scale`, and the mean of the ranks' models is the mean of their v.
  // mark_base() keeps a copy of v; write_changes() writes the pairs (i, v_i - base_i) for
  // the ascending indices `moved` (those the steps since touched) where v_i differs, a
  // sparse stream over [0, N); take_mean_change() sets each v_i that any rank changed to
  // base_i + sum_i / ranks, for `sum` the sum of all ranks' changes (`own`, this rank's;
  // both ascending by index), and makes that the base. A renormalisation rescales the
  // base with v, so where v did not move the change stays exactly zero. Without Adagrad
  // only: its sums would need averaging too.
  void mark_base();
  void write_changes(std::span<const uint32_t> moved, Stream<float>& out) const;
  void take_mean_change(const Stream<float>& own, const Stream<float>& sum, int ranks);

  // The state for a device that holds the model through an epoch's steps
  // (device/batch_device.h): v into `v` (dim() floats), AdaGrad's sums into `sum_sq`
  // (dim() floats, or none without AdaGrad), and the step's scalars; then back.
  bool adagrad() const { return !adagrad_.empty(); }
  StepScale step_scale() const { return step_; }
  void copy_out(std::span<float> v, std::span<float> sum_sq) const;
  void copy_in(std::span<const float> v, std::span<const float> sum_sq, const StepScale& step);

  // Changes with every change of the state (v, its scale, AdaGrad's sums) and is unique
  // across all Weights, so two states with one stamp are the same state (a copy takes
  // its source's): a device that gave the model back knows whether it still holds it.
  uint64_t stamp() const { return stamp_; }

  // The exact bits of the state (scale, v, Adagrad's sums), for checkpoints. load_state
  // throws std::runtime_error for a state of another dimension or schedule.
  void save_state(StateWriter& out) const;
  void load_state(StateReader& in);

 private:
  void restamp();
  void update(uint32_t i, float g) {
    step_coordinate(slots_[i].v, adagrad_.empty() ? nullptr : &adagrad_[i], g, step_.coef);
  }

  struct Slot {
    float v;
    float scratch;
  };
  ZeroedArray<Slot> slots_;  // zero until touched: model/zeroed_array.h
  std::vector<float> adagrad_;  // empty unless Adagrad
  HugePageArray<float> base_;   // v at the last mark_base(), empty until then
  StepScale step_;
  int threads_;
  uint64_t stamp_ = 0;
};

}  // namespace mpisgd
