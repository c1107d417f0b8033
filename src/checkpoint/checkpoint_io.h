#pragma once
// Writing and reading a checkpoint across the ranks. Rank 0 alone touches the file: the
// ranks' strategy states come to it point to point, in 1 GiB pieces so that no count
// overflows an int, and go back the same way on resume. One writer keeps the write atomic
// (one temporary file, one rename) and the CRC over the whole file simple; the states are
// small next to the model (a residual at most), so gathering them costs little.
#include <cstddef>
#include <string>
#include <vector>

#include <mpi.h>

#include "checkpoint/checkpoint_file.h"

namespace mpisgd {

// Collective. `c` carries the run's identity, epoch, step and (on rank 0) the weights;
// `mine` is this rank's strategy state. Returns the path written. Throws JobFailed on
// every rank if rank 0 cannot write.
std::string save_checkpoint(MPI_Comm comm, const std::string& dir, Checkpoint c, std::vector<std::byte> mine);

struct ResumePoint {
  std::string path;
  Checkpoint checkpoint;       // `ranks` left empty
  std::vector<std::byte> mine;  // this rank's strategy state (empty if the checkpoint has another P)
};

// Collective: every rank gets the newest valid checkpoint in `dir`; rank 0 warns about any
// newer one it had to pass over. Throws JobFailed on every rank if there is none.
ResumePoint load_checkpoint(MPI_Comm comm, const std::string& dir);

}  // namespace mpisgd
