#pragma once
// The settings a resumed run must share with the checkpoint's run to end with the same
// model bits, as "key=value" lines. Left out on purpose, so a resume may change them:
// --epochs (a larger value extends a run), --test, --profile, --save-model, progress and
// log output, --max-memory, the checkpoint flags, and the data's path (data_identity.h
// checks its content). --threads is in: the gradient's sums depend on the thread count.
// --device is in, but may change: the model goes on from the checkpoint's bits with the
// other device's rounding, so the run matches the uninterrupted one to rounding only
// (exactly where both devices sum alike: the CPU at one thread and the GPU path on
// Thrust's OpenMP backend).
#include <string>
#include <vector>

#include "jobs/train_job.h"

namespace mpisgd {

std::string run_identity(const TrainConfig& c, int ranks, uint32_t dim);

// "key: checkpoint has A, this run B" for every line that differs, in order; where
// `rounding_only` is given, the lines a resume may change (--device) go there instead.
std::vector<std::string> identity_differences(const std::string& saved, const std::string& now,
                                              std::vector<std::string>* rounding_only = nullptr);

}  // namespace mpisgd
