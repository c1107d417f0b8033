#include "comm/counted_comm.h"

#include <algorithm>

namespace mpisgd {

CountedComm::CountedComm(MPI_Comm comm, Thread thread) : watched_(thread == Thread::main) {
  MPI_Comm_dup(comm, &comm_);
  MPI_Comm_rank(comm_, &rank_);
  MPI_Comm_size(comm_, &size_);
}

CountedComm::~CountedComm() { MPI_Comm_free(&comm_); }

void CountedComm::allreduce_sum_bytes(void* data, size_t n, MPI_Datatype type, size_t elem_bytes) {
  if (size_ == 1 || n == 0) return;
  Timed timed(*this);
  auto* bytes = static_cast<char*>(data);
  for (size_t done = 0; done < n;) {
    size_t count = std::min(kMaxMpiCount, n - done);
    MPI_Allreduce(MPI_IN_PLACE, bytes + done * elem_bytes, static_cast<int>(count), type, MPI_SUM,
                  comm_);
    done += count;
  }
  uint64_t volume = 2 * (static_cast<uint64_t>(size_) - 1) * n * elem_bytes / size_;
  stats_.bytes_sent += volume;
  stats_.bytes_received += volume;
}

}  // namespace mpisgd
