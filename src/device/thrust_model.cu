// The model a ThrustGradient holds through an epoch (device/thrust_gradient.h): taken
// from and given back to the host's Weights, stepped with the host's arithmetic
// (model/step_rule.h), and the error feedback it keeps beside it.
#include <chrono>
#include <optional>
#include <string>

#include <thrust/copy.h>
#include <thrust/count.h>
#include <thrust/for_each.h>
#include <thrust/iterator/counting_iterator.h>
#include <thrust/transform.h>

#include "device/gpu_batch_device.h"
#include "device/thrust_feedback.h"
#include "device/thrust_state.h"
#include "model/step_rule.h"

namespace mpisgd {
namespace {

using thrust_detail::raw;

// The held model's step with sparse pairs (each index once) or a dense gradient, as
// Weights::step_pairs and Weights::step_dense take it; sum_sq is null without AdaGrad.
struct StepPair {
  const Pair<float>* g;
  float* v;
  float* sum_sq;
  double coef;
  MPISGD_HD void operator()(uint32_t j) const {
    const uint32_t i = g[j].index;
    step_coordinate(v[i], sum_sq ? sum_sq + i : nullptr, g[j].value, coef);
  }
};
struct StepDense {
  const float* g;
  float* v;
  float* sum_sq;
  double coef;
  MPISGD_HD void operator()(uint32_t i) const {
    if (sum_sq && g[i] == 0) return;  // changes nothing; Weights::step_dense skips it too
    step_coordinate(v[i], sum_sq ? sum_sq + i : nullptr, g[i], coef);
  }
};

struct Rescale {
  double scale;
  MPISGD_HD float operator()(float v) const { return static_cast<float>(v * scale); }
};

struct NonZero {
  MPISGD_HD bool operator()(float x) const { return x != 0; }
};

}  // namespace

uint64_t ThrustGradient::step_held(bool dense, uint32_t count, double eta) {
  State& s = *state_;
  const auto on = thrust::device(s.temporaries);
  thrust::counting_iterator<uint32_t> zero(0);
  float* sum_sq = s.model_sum_sq.empty() ? nullptr : raw(s.model_sum_sq);
  held_.begin(eta);
  uint64_t nnz = count;
  if (dense) {
    thrust::for_each(on, zero, zero + count, StepDense{raw(s.dense_in), raw(s.model), sum_sq, held_.coef});
    nnz = static_cast<uint64_t>(thrust::count_if(on, s.dense_in.begin(), s.dense_in.begin() + count, NonZero{}));
  } else {
    thrust::for_each(on, zero, zero + count, StepPair{raw(s.out), raw(s.model), sum_sq, held_.coef});
  }
  if (held_.needs_renormalising()) {
    thrust::transform(on, s.model.begin(), s.model.end(), s.model.begin(), Rescale{held_.scale});
    held_.scale = 1;
  }
  return nnz;
}

BatchLoss ThrustGradient::compute_and_step(const Dataset& data, std::span<const uint64_t> rows, Weights& w,
                                           const Loss& loss, float scale, double eta) {
  if (!holding_) {
    BatchLoss result = compute(data, rows, w, loss, scale, own_);
    w.step_pairs(eta, own_.pairs());
    return result;
  }
  // The pairs stay where they were summed; an empty batch still takes the step's decay.
  const auto began = std::chrono::steady_clock::now();
  BatchLoss result{0, rows.size(), 0};
  step_held(false, rows.empty() ? 0 : update_on_device(data, rows, w, loss, scale, result), eta);
  traffic_.seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - began).count();
  return result;
}

uint64_t ThrustGradient::step(const Stream<float>& sum, double eta) {
  State& s = *state_;
  const auto began = std::chrono::steady_clock::now();
  if (sum.is_dense()) {
    s.dense_in.assign(sum.values().data(), sum.values().data() + sum.count());
  } else {
    s.out.resize(sum.count());
    thrust::copy(sum.pairs().data(), sum.pairs().data() + sum.count(), s.out.begin());
  }
  traffic_.to_device += static_cast<double>(sum.bytes());
  const uint64_t nnz = step_held(sum.is_dense(), sum.count(), eta);
  traffic_.seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - began).count();
  return nnz;
}

BatchDevice::DeviceFeedback ThrustGradient::make_feedback(const SparsifyOptions& options, uint32_t dim) {
  if (!ThrustFeedback::supports(options))
    return {nullptr, "the device selects by exact or threshold-reuse, with one weight column"};
  // Checked now, with the rows, the model and the batch buffers in place: a residual that
  // outgrew the device mid-run would end the job, where the host can select instead.
  const uint64_t needs = ThrustFeedback::bytes_at_most(dim);
  if (const std::optional<uint64_t> free = gpu_free_bytes(); free && needs > *free)
    return {nullptr, "its residual may take " + mib(needs) + " of the GPU, which has " + mib(*free) + " free", true};
  auto made = std::make_unique<ThrustFeedback>(options, dim);
  feedback_ = made.get();
  return {std::move(made), ""};
}

DeviceRecord ThrustGradient::traffic() const {
  DeviceRecord all = traffic_;
  if (feedback_) {
    all.to_device += feedback_->bytes_up();
    all.from_device += feedback_->bytes_down();
  }
  return all;
}

void ThrustGradient::take_model(const Weights& w) {
  State& s = *state_;
  held_ = w.step_scale();
  holding_ = true;
  // The device still has the state it gave back, which nothing has changed since: the
  // next epoch's take after an evaluation or a checkpoint, which only read the model.
  if (&w == given_to_ && w.stamp() == given_stamp_) return;
  const auto began = std::chrono::steady_clock::now();
  const size_t dim = w.dim(), sums = w.adagrad() ? dim : 0;
  s.host_model.resize(dim);
  s.host_sum_sq.resize(sums);
  float* const v = thrust::raw_pointer_cast(s.host_model.data());
  float* const sum_sq = thrust::raw_pointer_cast(s.host_sum_sq.data());
  w.copy_out({v, dim}, {sum_sq, sums});
  s.model.resize(dim);
  s.model_sum_sq.resize(sums);
  thrust::copy(v, v + dim, s.model.begin());
  thrust::copy(sum_sq, sum_sq + sums, s.model_sum_sq.begin());
  traffic_.to_device += 4.0 * static_cast<double>(dim + sums);
  traffic_.model_seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - began).count();
}

void ThrustGradient::give_model(Weights& w) {
  State& s = *state_;
  const auto began = std::chrono::steady_clock::now();
  const size_t dim = s.host_model.size(), sums = s.host_sum_sq.size();
  float* const v = thrust::raw_pointer_cast(s.host_model.data());
  float* const sum_sq = thrust::raw_pointer_cast(s.host_sum_sq.data());
  thrust::copy(s.model.begin(), s.model.end(), v);
  thrust::copy(s.model_sum_sq.begin(), s.model_sum_sq.end(), sum_sq);
  w.copy_in({v, dim}, {sum_sq, sums}, held_);
  holding_ = false;
  given_to_ = &w;
  given_stamp_ = w.stamp();
  traffic_.from_device += 4.0 * static_cast<double>(dim + sums);
  traffic_.model_seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - began).count();
}

}  // namespace mpisgd
