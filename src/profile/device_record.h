#pragma once
// A rank's GPU work (--device gpu): seconds inside the device's batch calls (transfers
// and the host's part of a batch included) and bytes copied to and from the device. Apart
// from epoch_profile.h so that device code, which nvcc compiles without MPI, can fill it.

namespace mpisgd {

struct DeviceRecord {
  double seconds = 0;
  double to_device = 0;
  double from_device = 0;

  DeviceRecord operator-(const DeviceRecord& o) const {
    return {seconds - o.seconds, to_device - o.to_device, from_device - o.from_device};
  }
};

}  // namespace mpisgd
