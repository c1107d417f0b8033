#pragma once
// Which BatchDevice (device/batch_device.h) each rank computes its gradients on: --device
// cpu (BatchGradient) or gpu (the Thrust path, in builds made with GPU=1 or GPU=omp).
#include <cstdint>
#include <memory>
#include <string>

#include <mpi.h>

#include "device/batch_device.h"

namespace mpisgd {

enum class DeviceKind { cpu, gpu };

struct DeviceChoice {
  DeviceKind kind = DeviceKind::cpu;
  int gpu_id = -1;  // -1: the rank's number on its node modulo the GPUs it sees
};

// "cpu" or "gpu"; throws std::invalid_argument for another name.
DeviceKind device_from_name(const std::string& name);

// Collective over `comm`: every rank makes its device for the batches of `batch` rows of
// `data` over `dim` weights in `columns` columns, `threads` CPU threads, with room for the
// model where `holds_model` (a strategy that lets the device step it, SummingStrategy). A
// rank that does not train (a parameter server) gets the CPU path, which costs nothing
// until used. Where any rank cannot (a build without the GPU path, no driver, no GPU, too
// little GPU memory), every rank throws JobFailed naming the first such rank's cause.
std::unique_ptr<BatchDevice> make_batch_device(const DeviceChoice& choice, const Dataset& data, uint32_t dim,
                                               int threads, uint64_t batch, uint32_t columns, bool trains,
                                               bool holds_model, MPI_Comm comm);

}  // namespace mpisgd
