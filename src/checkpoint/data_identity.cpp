#include "checkpoint/data_identity.h"

#include <vector>

#include "data/crc32c.h"

namespace mpisgd {

uint64_t data_identity(const Dataset& d, MPI_Comm comm) {
  uint32_t crc = crc32c(0, d.label.data(), d.label.size() * sizeof(float));
  for (uint64_t r = 0; r < d.rows(); ++r) {
    const uint64_t length = d.row_ptr[r + 1] - d.row_ptr[r];
    crc = crc32c(crc, &length, sizeof length);
  }
  crc = crc32c(crc, d.index.data(), d.index.size() * sizeof(uint32_t));
  crc = crc32c(crc, d.value.data(), d.value.size() * sizeof(float));
  int size = 1;
  MPI_Comm_size(comm, &size);
  std::vector<uint32_t> all(static_cast<size_t>(size));
  MPI_Allgather(&crc, 1, MPI_UINT32_T, all.data(), 1, MPI_UINT32_T, comm);
  uint32_t combined = crc32c(0, all.data(), all.size() * sizeof(uint32_t));
  combined = crc32c(combined, &d.dim, sizeof d.dim);
  return uint64_t{combined} << 32 | static_cast<uint32_t>(d.global_rows);
}

}  // namespace mpisgd
