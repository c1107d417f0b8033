#include "strategies/feedback_on_device.h"

#include <spdlog/spdlog.h>

namespace mpisgd {

bool move_feedback_to(BatchDevice& device, const SparsifyOptions& options, uint32_t dim,
                      std::unique_ptr<Feedback>& feedback) {
  BatchDevice::DeviceFeedback on_device = device.make_feedback(options, dim);
  if (!on_device.feedback) {
    // Every rank shares the options, and rank 0 speaks for them; a GPU short of memory is
    // one rank's own, so that rank warns.
    spdlog::log(on_device.short_of_memory ? spdlog::level::warn : spdlog::level::info,
                "--device gpu: top-k selects on the host, to which each batch's update comes down ({})",
                on_device.why_not);
    return false;
  }
  spdlog::info("--device gpu: top-k selects on the device, where the residual stays; only the selected pairs come "
               "down");
  feedback = std::move(on_device.feedback);
  return true;
}

}  // namespace mpisgd
