#include <stdexcept>

#include "device/device_top_k.h"
#include "device/gpu_batch_device.h"

namespace mpisgd {

GpuBackend gpu_backend() { return GpuBackend::none; }

std::optional<std::string> gpu_unavailable() {
  return "--device gpu: this build has no GPU path; build with `make GPU=1` (CUDA, into "
         "build-gpu/) or `make GPU=omp` (the same device code on the CPU, into build-gpu-omp/)";
}

std::unique_ptr<BatchDevice> make_gpu_batch_device(const Dataset&, uint32_t, int, uint64_t, uint32_t, bool, int,
                                                   int, std::string&) {
  throw std::runtime_error(*gpu_unavailable());
}

// No DeviceTopK can be made here, so its members past the constructor are never reached.
struct DeviceTopK::State {};
DeviceTopK::DeviceTopK() { throw std::runtime_error(*gpu_unavailable()); }
DeviceTopK::~DeviceTopK() = default;
void DeviceTopK::load(std::span<const float>) {}
uint32_t DeviceTopK::select(uint64_t) { return 0; }
std::vector<uint32_t> DeviceTopK::kept() const { return {}; }
uint32_t DeviceTopK::read() const { return 0; }

}  // namespace mpisgd
