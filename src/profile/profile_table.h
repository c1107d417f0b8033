#pragma once
// Rank 0's per-epoch table on stdout: min/mean/max over ranks for times and bytes.
#include <cstdio>

#include "profile/epoch_profile.h"

namespace mpisgd {

void print_profile_header(std::FILE* out, bool classification);
void print_profile_row(std::FILE* out, const EpochSummary& s);

}  // namespace mpisgd
