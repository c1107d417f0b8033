#pragma once
// SummingStrategy::select_on for the strategies that sparsify with error feedback.
#include <cstdint>
#include <memory>

#include "device/batch_device.h"
#include "sparse/error_feedback.h"

namespace mpisgd {

// Replaces `feedback` (the host's, before any step) with the device's where `device` can
// select as `options` ask, and says at start where top-k selects. True where it moved.
bool move_feedback_to(BatchDevice& device, const SparsifyOptions& options, uint32_t dim,
                      std::unique_ptr<Feedback>& feedback);

}  // namespace mpisgd
