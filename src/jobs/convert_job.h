#pragma once
// `mpisgd convert`: LIBSVM text to the binary cache. Collective over `comm`: the ranks
// parse their parts of the text in parallel and write their rows at their offsets.
#include <cstdint>
#include <string>

#include <mpi.h>

namespace mpisgd {

struct ConvertConfig {
  std::string data, out;
  bool zero_based = false;
  uint64_t dim = 0;
  std::string max_memory = "auto";  // data/csr_memory.h
};

void run_convert(const ConvertConfig& config, MPI_Comm comm);

}  // namespace mpisgd
