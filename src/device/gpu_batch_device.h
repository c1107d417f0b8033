#pragma once
// The GPU half of make_batch_device (device/batch_device.h), built only with the GPU path
// (`make GPU=1`: CUDA; `make GPU=omp`: the same device code on the CPU through Thrust's
// OpenMP backend); the default build defines it to refuse by name (no_gpu.cpp).
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "device/batch_device.h"

namespace mpisgd {

// Picks the GPU (`gpu_id`, or `rank_on_node` modulo the GPUs visible), checks that the
// rows, the batch buffers and, where `holds_model`, a model of `dim` weights fit in its
// free memory, uploads the rows, and says which GPU in `description` (name, memory,
// compute capability).
// Throws std::runtime_error naming the cause where it cannot.
std::unique_ptr<BatchDevice> make_gpu_batch_device(const Dataset& data, uint32_t dim, int threads, uint64_t batch,
                                                   uint32_t columns, bool holds_model, int gpu_id,
                                                   int rank_on_node, std::string& description);

// What this build's GPU path runs on: none (the default build), CUDA (GPU=1) or the CPU
// through Thrust's OpenMP backend (GPU=omp).
enum class GpuBackend { none, cuda, omp };
GpuBackend gpu_backend();

// `bytes` in MiB, rounded up, as the GPU path's messages give sizes: "12 MiB".
std::string mib(uint64_t bytes);

// The current GPU's free memory under CUDA; none under the OpenMP backend, whose "device"
// memory is the host's.
std::optional<uint64_t> gpu_free_bytes();

// Why no rank of this process could use the GPU path (no driver, no device, a build
// without it), or nothing where it can run.
std::optional<std::string> gpu_unavailable();

}  // namespace mpisgd
