// make_gpu_batch_device (device/gpu_batch_device.h) for the two builds of the GPU path:
// under CUDA it picks and names a GPU and checks its free memory; under Thrust's OpenMP
// backend (`make GPU=omp`) the "device" is this rank's CPU threads.
#include <algorithm>
#include <stdexcept>
#include <string>

#include <thrust/detail/config.h>

#include "device/gpu_batch_device.h"
#include "device/thrust_gradient.h"

#if THRUST_DEVICE_SYSTEM == THRUST_DEVICE_SYSTEM_CUDA
#include <cuda_runtime.h>
#else
#include <omp.h>
#endif

namespace mpisgd {

std::string mib(uint64_t bytes) { return std::to_string((bytes + (1 << 20) - 1) >> 20) + " MiB"; }

namespace {

uint64_t longest_row(const Dataset& data) {
  uint64_t longest = 0;
  for (uint64_t r = 0; r < data.rows(); ++r) longest = std::max(longest, data.row_ptr[r + 1] - data.row_ptr[r]);
  return longest;
}

#if THRUST_DEVICE_SYSTEM == THRUST_DEVICE_SYSTEM_CUDA
std::string cuda_error(cudaError_t e) { return std::string(cudaGetErrorName(e)) + ": " + cudaGetErrorString(e); }

// The GPUs CUDA sees, or why none can be used.
int count_gpus(std::string& why) {
  int count = 0;
  const cudaError_t e = cudaGetDeviceCount(&count);
  if (e == cudaErrorInsufficientDriver)
    why = "--device gpu: no usable GPU: the NVIDIA driver is missing or older than this build's CUDA runtime (" +
          cuda_error(e) + ")";
  else if (e == cudaErrorNoDevice || (e == cudaSuccess && count == 0))
    why = "--device gpu: no GPU: the CUDA driver sees no device";
  else if (e != cudaSuccess)
    why = "--device gpu: no usable GPU (" + cuda_error(e) + ")";
  return why.empty() ? count : 0;
}

// The GPU this rank uses, made current; throws naming why there is none.
int pick_gpu(int gpu_id, int rank_on_node) {
  std::string why;
  const int count = count_gpus(why);
  if (!why.empty()) throw std::runtime_error(why);
  if (gpu_id >= count)
    throw std::runtime_error("--gpu-id " + std::to_string(gpu_id) + ": this node has " + std::to_string(count) +
                             " GPU(s), numbered from 0");
  const int id = gpu_id >= 0 ? gpu_id : rank_on_node % count;
  if (const cudaError_t set = cudaSetDevice(id); set != cudaSuccess)
    throw std::runtime_error("--device gpu: GPU " + std::to_string(id) + " cannot be used (" + cuda_error(set) + ")");
  return id;
}
#endif

}  // namespace

GpuBackend gpu_backend() {
#if THRUST_DEVICE_SYSTEM == THRUST_DEVICE_SYSTEM_CUDA
  return GpuBackend::cuda;
#else
  return GpuBackend::omp;
#endif
}

std::optional<uint64_t> gpu_free_bytes() {
#if THRUST_DEVICE_SYSTEM == THRUST_DEVICE_SYSTEM_CUDA
  size_t free = 0, total = 0;
  if (cudaMemGetInfo(&free, &total) != cudaSuccess) return 0;
  return free;
#else
  return std::nullopt;
#endif
}

std::optional<std::string> gpu_unavailable() {
#if THRUST_DEVICE_SYSTEM == THRUST_DEVICE_SYSTEM_CUDA
  std::string why;
  count_gpus(why);
  if (!why.empty()) return why;
#endif
  return std::nullopt;
}

std::unique_ptr<BatchDevice> make_gpu_batch_device(const Dataset& data, uint32_t dim, int threads, uint64_t batch,
                                                   uint32_t columns, bool holds_model, int gpu_id,
                                                   int rank_on_node, std::string& description) {
  const uint64_t rows = data.bytes();  // what the device's copy of the rows takes
  const uint64_t longest = longest_row(data);
  const uint64_t buffers = ThrustGradient::batch_bytes(batch, longest, columns);
  // A strategy that steps the model itself keeps it on the host; only the batch's weights
  // go up, in the batch buffers.
  const uint64_t model = holds_model ? ThrustGradient::model_bytes(dim) : 0;
  const std::string model_text = holds_model ? "the model " + mib(model) : "the model on the host";
  auto where = ThrustGradient::Rows::resident;
#if THRUST_DEVICE_SYSTEM == THRUST_DEVICE_SYSTEM_CUDA
  const int id = pick_gpu(gpu_id, rank_on_node);
  cudaDeviceProp prop{};
  cudaGetDeviceProperties(&prop, id);
  size_t free = 0, total = 0;
  if (const cudaError_t e = cudaMemGetInfo(&free, &total); e != cudaSuccess)
    throw std::runtime_error("--device gpu: GPU " + std::to_string(id) + " cannot be used (" + cuda_error(e) + ")");
  description = "GPU " + std::to_string(id) + " (" + prop.name + ", " + mib(free) + " of " + mib(total) +
                " free, compute capability " + std::to_string(prop.major) + "." + std::to_string(prop.minor) +
                "): rows " + mib(rows) + ", batch buffers " + mib(buffers) + ", " + model_text;
  if (rows + buffers + model > free) {
    // The rows go up batch by batch instead, where a batch's rows fit beside the rest.
    const uint64_t streamed = ThrustGradient::streamed_bytes(batch, longest);
    if (streamed + buffers + model > free)
      throw std::runtime_error("--device gpu: this rank's batches take " + mib(buffers) + " on the GPU, " +
                               model_text + " and a batch's rows " + mib(streamed) + " (all its rows " + mib(rows) +
                               "), more than the " + mib(free) + " free on GPU " + std::to_string(id) + " (" +
                               prop.name + "); use a smaller --batch, more ranks, or --device cpu");
    where = ThrustGradient::Rows::streamed;
    description += "; the rows do not fit and go up batch by batch";
  }
#else
  (void)gpu_id;
  (void)rank_on_node;
  omp_set_num_threads(threads);
  description = "the CPU through Thrust's OpenMP backend (" + std::to_string(threads) +
                (threads == 1 ? " thread" : " threads") + "): rows " + mib(rows) + ", batch buffers " + mib(buffers) +
                ", " + model_text;
#endif
  return std::make_unique<ThrustGradient>(data, columns, ThrustGradient::Margins::by_warp, threads, where);
}

}  // namespace mpisgd
