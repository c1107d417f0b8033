#pragma once
// What a mistyped name was probably meant to be, for "did you mean" hints in messages.
#include <string>
#include <vector>

namespace mpisgd::cli {

// The candidate fewest edits away from `typed` (a swap of two neighbours counts as one),
// if at most one character in three differs; empty when none is that close, as a far-off
// suggestion misleads more than none.
std::string nearest_name(const std::string& typed, const std::vector<std::string>& candidates);

// " (did you mean 'NAME'?)", NAME between `open` and `close`, or "" when nothing is close.
std::string did_you_mean(const std::string& typed, const std::vector<std::string>& candidates,
                         const std::string& open = "'", const std::string& close = "'");

}  // namespace mpisgd::cli
