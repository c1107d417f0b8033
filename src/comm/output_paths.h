#pragma once
// Outputs are checked before any data is read: a run that trains for hours and then
// cannot write its model has lost those hours.
#include <string>
#include <vector>

#include <mpi.h>

namespace mpisgd {

struct OutputPath {
  enum Kind { file, directory };  // a directory is created by the run where missing
  std::string flag;               // "--save-model", named in the message
  std::string path;               // empty: not asked for, not checked
  Kind kind = file;
};

// Collective: rank 0 checks that each output's folder exists and that it can create (and
// then removes) a file there; every rank throws JobFailed with the first failure's
// message, naming the flag, the path and the cause.
void check_output_paths(MPI_Comm comm, const std::vector<OutputPath>& outputs);

}  // namespace mpisgd
