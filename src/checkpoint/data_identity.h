#pragma once
// What says that a resumed run trains on the data the checkpoint was made from: the
// CRC-32C of every rank's rows as parsed (labels, row lengths, indices, values), combined
// in rank order with N and the row count. Content, not the path or the file's time, so a
// moved file or its binary cache resumes, while any changed value or another split over
// the ranks does not. One pass over the rows at the CRC instruction's speed, only when
// checkpointing or resuming.
#include <cstdint>

#include <mpi.h>

#include "data/dataset.h"

namespace mpisgd {

// Collective over `comm`; the same value on every rank.
uint64_t data_identity(const Dataset& d, MPI_Comm comm);

}  // namespace mpisgd
