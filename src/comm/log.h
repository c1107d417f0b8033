#pragma once
#include <string>

namespace mpisgd {

// Rank-prefixed spdlog on stderr. Rank 0 logs at `level`; the other ranks only report
// warnings and errors unless `level` is debug or trace, so P ranks do not print P copies.
void init_logging(int rank, const std::string& level);

}  // namespace mpisgd
