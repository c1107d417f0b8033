#include "device/device_top_k.h"

#include <stdexcept>

#include <thrust/copy.h>
#include <thrust/device_vector.h>
#include <thrust/execution_policy.h>
#include <thrust/functional.h>
#include <thrust/transform_reduce.h>

#include "device/gpu_batch_device.h"
#include "device/thrust_functors.h"
#include "device/thrust_top_k.h"

namespace mpisgd {

struct DeviceTopK::State {
  thrust::device_vector<float> values;
  thrust::device_vector<uint32_t> kept;
  thrust_detail::TopKScratch scratch;
  thrust_detail::TemporaryCache temporaries;
};

DeviceTopK::DeviceTopK() {
  if (const auto why = gpu_unavailable()) throw std::runtime_error(*why);
  state_ = std::make_unique<State>();
}
DeviceTopK::~DeviceTopK() = default;

void DeviceTopK::load(std::span<const float> values) { state_->values.assign(values.begin(), values.end()); }

uint32_t DeviceTopK::select(uint64_t k) {
  State& s = *state_;
  if (k == 0 || k >= s.values.size()) throw std::invalid_argument("DeviceTopK::select: k must be in [1, n)");
  return thrust_detail::top_k_positions(s.values.data(), s.values.size(), k, s.kept, s.scratch, s.temporaries);
}

std::vector<uint32_t> DeviceTopK::kept() const {
  std::vector<uint32_t> out(state_->kept.size());
  thrust::copy(state_->kept.begin(), state_->kept.end(), out.begin());
  return out;
}

uint32_t DeviceTopK::read() const {
  State& s = *state_;
  return thrust::transform_reduce(thrust::device(s.temporaries), s.values.begin(), s.values.end(),
                                  thrust_detail::Magnitude{}, uint32_t{0}, thrust::maximum<uint32_t>());
}

}  // namespace mpisgd
