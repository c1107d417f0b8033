#include "strategies/feedback_on_device.h"

#include <spdlog/spdlog.h>

namespace mpisgd {

bool move_feedback_to(BatchDevice& device, const SparsifyOptions& options, uint32_t dim,
                      std::unique_ptr<Feedback>& feedback) {
  std::unique_ptr<Feedback> on_device = device.make_feedback(options, dim);
  if (!on_device) {
    spdlog::info("--device gpu: top-k selects on the host, to which each batch's update comes down (the device "
                 "selects by exact or threshold-reuse, with one weight column)");
    return false;
  }
  spdlog::info("--device gpu: top-k selects on the device, where the residual stays; only the selected pairs come "
               "down");
  feedback = std::move(on_device);
  return true;
}

}  // namespace mpisgd
