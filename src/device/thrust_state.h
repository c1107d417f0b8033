#pragma once
// ThrustGradient's device state (device/thrust_gradient.h), shared by the files that
// implement it: thrust_gradient.cu (the batch's update) and thrust_model.cu (the model the
// device holds). Read only by device code, which both GPU builds compile.
#include <cstddef>
#include <cstdint>
#include <map>
#include <mutex>
#include <vector>

#include <thrust/device_vector.h>
#include <thrust/execution_policy.h>
#include <thrust/memory.h>

#include "device/thrust_gradient.h"

namespace mpisgd::thrust_detail {

template <class T>
T* raw(thrust::device_vector<T>& v) {
  return thrust::raw_pointer_cast(v.data());
}
template <class T>
const T* raw(const thrust::device_vector<T>& v) {
  return thrust::raw_pointer_cast(v.data());
}

// Thrust asks for temporary storage in every sort, scan, unique and copy_if; under CUDA
// each ask is a cudaMalloc and a cudaFree, and the free waits for the device, a cost a
// batch of 100 short rows pays a dozen times. One batch's temporaries are much the size of
// the last one's, so a freed block is kept and handed out again (the smallest that fits);
// all go back with the gradient. The OpenMP backend's sorts ask from inside their parallel
// regions, so the lists are guarded.
class TemporaryCache {
 public:
  using value_type = char;
  TemporaryCache() = default;
  TemporaryCache(const TemporaryCache&) = delete;
  TemporaryCache& operator=(const TemporaryCache&) = delete;
  ~TemporaryCache() {
    for (const auto& [bytes, block] : free_) thrust::free(thrust::device, thrust::device_pointer_cast(block));
    for (const auto& [block, bytes] : lent_) thrust::free(thrust::device, thrust::device_pointer_cast(block));
  }

  char* allocate(std::ptrdiff_t bytes) {
    const std::lock_guard<std::mutex> hold(lock_);
    char* block = nullptr;
    if (const auto kept = free_.lower_bound(bytes); kept != free_.end()) {
      bytes = kept->first;
      block = kept->second;
      free_.erase(kept);
    } else {
      block = thrust::malloc<char>(thrust::device, static_cast<size_t>(bytes)).get();
    }
    lent_.emplace(block, bytes);
    return block;
  }
  void deallocate(char* block, size_t) {
    const std::lock_guard<std::mutex> hold(lock_);
    const auto lent = lent_.find(block);
    free_.emplace(lent->second, block);
    lent_.erase(lent);
  }

 private:
  std::multimap<std::ptrdiff_t, char*> free_;  // by size
  std::map<char*, std::ptrdiff_t> lent_;
  std::mutex lock_;
};

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
  std::vector<float> host_weights, host_model, host_sum_sq;
  std::vector<double> host_loss;
  thrust_detail::TemporaryCache temporaries;
};

}  // namespace mpisgd
