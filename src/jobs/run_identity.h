#pragma once
// The settings a resumed run must share with the checkpoint's run to end with the same
// model bits, as "key=value" lines. Left out on purpose, so a resume may change them:
// --epochs (a larger value extends a run), --test, --profile, --save-model, progress and
// log output, --max-memory, the checkpoint flags, and the data's path (data_identity.h
// checks its content). --threads is in: the gradient's sums depend on the thread count.
#include <string>
#include <vector>

#include "jobs/train_job.h"

namespace mpisgd {

std::string run_identity(const TrainConfig& c, int ranks, uint32_t dim);

// "key: checkpoint has A, this run B" for every line that differs, in order.
std::vector<std::string> identity_differences(const std::string& saved, const std::string& now);

}  // namespace mpisgd
