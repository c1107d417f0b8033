#pragma once
// Rank 0's per-epoch table on stdout: min/mean/max over ranks for times and bytes.
#include <cstdio>
#include <string>

#include "profile/epoch_profile.h"

namespace mpisgd {

// "min/mean/max" of `m` in `unit`s with `precision` decimals, as the table shows spreads.
std::string format_spread(const MinMeanMax& m, double unit, int precision);

void print_profile_header(std::FILE* out, bool classification);
void print_profile_row(std::FILE* out, const EpochSummary& s);

}  // namespace mpisgd
