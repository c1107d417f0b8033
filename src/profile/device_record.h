#pragma once
// A rank's GPU work (--device gpu): seconds inside the device's batch calls (transfers
// and the host's part of a batch included), seconds moving the model the device holds
// through an epoch to it and back (BatchDevice::take_model, give_model: part of the
// epoch's wall time, not of its compute), and bytes copied to and from the device. Apart
// from epoch_profile.h so that device code, which nvcc compiles without MPI, can fill it.

namespace mpisgd {

struct DeviceRecord {
  double seconds = 0;
  double model_seconds = 0;
  double to_device = 0;
  double from_device = 0;

  DeviceRecord operator-(const DeviceRecord& o) const {
    return {seconds - o.seconds, model_seconds - o.model_seconds, to_device - o.to_device,
            from_device - o.from_device};
  }
};

}  // namespace mpisgd
