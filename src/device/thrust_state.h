#pragma once
// ThrustGradient's device state (device/thrust_gradient.h), shared by the files that
// implement it: thrust_gradient.cu (the batch's update) and thrust_model.cu (the model the
// device holds). Read only by device code, which both GPU builds compile.
#include <cstddef>
#include <cstdint>
#include <vector>

#include <thrust/device_vector.h>
#include <thrust/execution_policy.h>
#include <thrust/universal_vector.h>

#include "device/thrust_gradient.h"
#include "device/thrust_temporaries.h"

namespace mpisgd::thrust_detail {

template <class T>
T* raw(thrust::device_vector<T>& v) {
  return thrust::raw_pointer_cast(v.data());
}
template <class T>
const T* raw(const thrust::device_vector<T>& v) {
  return thrust::raw_pointer_cast(v.data());
}

}  // namespace mpisgd::thrust_detail

namespace mpisgd {

struct ThrustGradient::State {
  // The rank's rows, uploaded once.
  thrust::device_vector<uint64_t> row_ptr;
  thrust::device_vector<uint32_t> index;
  thrust::device_vector<float> value, label;
  // Per batch, kept to be reused: B rows, E entries, U distinct features.
  thrust::device_vector<uint64_t> rows, start, entry_at;                // B, B + 1, E
  thrust::device_vector<uint32_t> entry_row, entry_feature, entry_slot;  // E
  thrust::device_vector<uint32_t> feature, sorted_slot, order, first;    // U, E, E, U + 1
  thrust::device_vector<float> weights, sum, coef;                       // U K, U K, B K
  thrust::device_vector<uint8_t> touched;                                // U K
  thrust::device_vector<uint32_t> touched_id;                            // U K
  thrust::device_vector<Pair<float>> out;                                // nnz
  thrust::device_vector<double> margin, derivative, row_loss;            // B K, B K, B
  // The model while the device holds it: v, AdaGrad's sums (empty without), and a dense
  // sum on its way to a step (a sparse one arrives in `out`).
  thrust::device_vector<float> model, model_sum_sq, dense_in;
  std::vector<uint64_t> host_row_ptr;  // a streamed batch's rows, staged
  std::vector<uint32_t> host_index;
  std::vector<float> host_value, host_label;
  std::vector<uint32_t> host_feature;
  std::vector<float> host_weights;
  // The held model's staging on its way up and back, once an epoch: in pinned memory,
  // which the GPU copies at the bus's speed where pageable memory goes through the
  // driver's bounce buffers.
  thrust::universal_host_pinned_vector<float> host_model, host_sum_sq;
  std::vector<double> host_loss;
  thrust_detail::TemporaryCache temporaries;
};

}  // namespace mpisgd
