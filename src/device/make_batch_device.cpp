#include "device/make_batch_device.h"

#include <optional>
#include <stdexcept>
#include <vector>

#include <spdlog/spdlog.h>

#include "comm/job_error.h"
#include "comm/node_facts.h"
#include "device/batch_gradient.h"
#include "device/gpu_batch_device.h"

namespace mpisgd {
namespace {

// Rank 0 logs every rank's device: the other ranks log warnings only (comm/log.h).
void log_devices(const std::string& description, MPI_Comm comm) {
  constexpr int kLength = 256;
  int rank = 0, size = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  std::vector<char> mine(kLength, '\0'), all(rank == 0 ? size_t{kLength} * static_cast<size_t>(size) : 0);
  description.copy(mine.data(), kLength - 1);
  MPI_Gather(mine.data(), kLength, MPI_CHAR, all.data(), kLength, MPI_CHAR, 0, comm);
  for (int r = 0; rank == 0 && r < size; ++r)
    spdlog::info("--device gpu, rank {}: {}", r, all.data() + static_cast<size_t>(r) * kLength);
}

}  // namespace

DeviceKind device_from_name(const std::string& name) {
  if (name == "cpu") return DeviceKind::cpu;
  if (name == "gpu") return DeviceKind::gpu;
  throw std::invalid_argument("unknown device '" + name + "': use cpu or gpu");
}

std::unique_ptr<BatchDevice> make_batch_device(const DeviceChoice& choice, const Dataset& data, uint32_t dim,
                                               int threads, uint64_t batch, uint32_t columns, bool trains,
                                               bool holds_model, MPI_Comm comm) {
  if (choice.kind == DeviceKind::cpu) return std::make_unique<BatchGradient>(data, dim, threads, batch, columns);
  const int on_node = rank_on_node(comm);
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  std::unique_ptr<BatchDevice> device;
  std::string description = "none: it serves and computes no gradients";
  std::optional<LocalFailure> failure;
  try {
    device = trains ? make_gpu_batch_device(data, dim, threads, batch, columns, holds_model, choice.gpu_id,
                                            on_node, description)
                    : std::make_unique<BatchGradient>(data, dim, threads, batch, columns);
  } catch (const std::exception& e) {
    failure = LocalFailure{static_cast<uint64_t>(rank), "rank " + std::to_string(rank) + ": " + e.what()};
  }
  agree_on_error(comm, failure);
  log_devices(description, comm);
  return device;
}

}  // namespace mpisgd
