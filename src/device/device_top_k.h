#pragma once
// The device's exact top-k selection (device/thrust_top_k.h) called from host code: the
// device tests hold it to the host's exact selector, and `select_bench --device gpu` times
// it against one read of the same values on the device. Where no GPU can run it (a build
// without the GPU path, no driver, no device) the constructor throws gpu_unavailable()'s
// reason.
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

namespace mpisgd {

class DeviceTopK {
 public:
  DeviceTopK();
  ~DeviceTopK();
  DeviceTopK(const DeviceTopK&) = delete;
  DeviceTopK& operator=(const DeviceTopK&) = delete;

  // Copies `values` to the device, the input of the calls that follow.
  void load(std::span<const float> values);
  // Selects the k largest magnitudes of the loaded values (1 <= k < n), ties to the lower
  // positions; returns the k-th largest magnitude's bits.
  uint32_t select(uint64_t k);
  // The ascending positions the last select() kept, brought to the host.
  std::vector<uint32_t> kept() const;
  // The largest magnitude's bits: one read of the loaded values on the device.
  uint32_t read() const;

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace mpisgd
