#include "comm/counted_comm.h"

#include <algorithm>
#include <numeric>

namespace mpisgd {
namespace {

uint64_t bytes_of(int count, MPI_Datatype type) {
  int size = 0;
  MPI_Type_size(type, &size);
  return static_cast<uint64_t>(count) * static_cast<uint64_t>(size);
}

uint64_t sum(const int* counts, int n) { return std::accumulate(counts, counts + n, uint64_t{0}); }

}  // namespace

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
  add_bytes(volume, volume);
}

void CountedComm::allgatherv(const void* mine, void* all, const int* counts, const int* displs, MPI_Datatype type) {
  MPI_Allgatherv(mine, counts[rank_], type, all, counts, displs, type, comm_);
  const uint64_t others = bytes_of(1, type) * (sum(counts, size_) - static_cast<uint64_t>(counts[rank_]));
  add_bytes(others, others);
}

void CountedComm::reduce_scatter_sum_bytes(const void* in, void* mine, const int* counts, MPI_Datatype type,
                                           size_t elem_bytes, MPI_Comm on) {
  MPI_Reduce_scatter(in, mine, counts, type, MPI_SUM, on);
  int me = 0, ranks = 1;
  MPI_Comm_rank(on, &me);
  MPI_Comm_size(on, &ranks);
  const uint64_t others = (sum(counts, ranks) - static_cast<uint64_t>(counts[me])) * elem_bytes;
  add_bytes(others, others);
}

void CountedComm::bcast_bytes(void* data, size_t n, MPI_Datatype type, size_t elem_bytes, int root) {
  auto* bytes = static_cast<char*>(data);
  for (size_t done = 0; done < n;) {
    const size_t count = std::min(kMaxMpiCount, n - done);
    MPI_Bcast(bytes + done * elem_bytes, static_cast<int>(count), type, root, comm_);
    done += count;
  }
  const uint64_t copy = n * elem_bytes;
  if (rank_ == root) add_bytes(copy, 0);
  else add_bytes(0, copy);
}

void CountedComm::send(const void* data, int count, MPI_Datatype type, int dest, int tag, MPI_Comm on) {
  on = or_this(on);
  MPI_Send(data, count, type, dest, tag, on);
  if (!is_self(dest, on)) add_bytes(bytes_of(count, type), 0);
}

int CountedComm::recv(void* data, int capacity, MPI_Datatype type, int source, int tag, MPI_Comm on) {
  on = or_this(on);
  MPI_Status status;
  MPI_Recv(data, capacity, type, source, tag, on, &status);
  return is_self(status.MPI_SOURCE, on) ? items(status, type) : count_arrived(status, type);
}

int CountedComm::sendrecv(const void* out, int out_count, void* in, int in_capacity, MPI_Datatype type, int partner,
                          int tag, MPI_Comm on) {
  on = or_this(on);
  MPI_Status status;
  MPI_Sendrecv(out, out_count, type, partner, tag, in, in_capacity, type, partner, tag, on, &status);
  if (is_self(partner, on)) return items(status, type);
  add_bytes(bytes_of(out_count, type), 0);
  return count_arrived(status, type);
}

MPI_Request CountedComm::isend(const void* data, int count, MPI_Datatype type, int dest, int tag, MPI_Comm on) {
  on = or_this(on);
  MPI_Request r;
  MPI_Isend(data, count, type, dest, tag, on, &r);
  if (!is_self(dest, on)) add_bytes(bytes_of(count, type), 0);
  return r;
}

MPI_Request CountedComm::irecv(void* data, int count, MPI_Datatype type, int source, int tag, MPI_Comm on) {
  on = or_this(on);
  MPI_Request r;
  MPI_Irecv(data, count, type, source, tag, on, &r);
  if (!is_self(source, on)) add_bytes(0, bytes_of(count, type));
  return r;
}

MPI_Request CountedComm::irecv_upto(void* data, int capacity_bytes, int source, int tag, MPI_Comm on) {
  MPI_Request r;
  MPI_Irecv(data, capacity_bytes, MPI_BYTE, source, tag, or_this(on), &r);
  return r;
}

int CountedComm::wait_received(MPI_Request& receive) {
  MPI_Status status;
  MPI_Wait(&receive, &status);
  return count_arrived(status, MPI_BYTE);
}

int CountedComm::wait_any_received(std::span<MPI_Request> receives, int* bytes) {
  int index = MPI_UNDEFINED;
  MPI_Status status;
  MPI_Waitany(static_cast<int>(receives.size()), receives.data(), &index, &status);
  const int arrived = count_arrived(status, MPI_BYTE);
  if (bytes) *bytes = arrived;
  return index;
}

bool CountedComm::is_self(int peer, MPI_Comm on) const {
  int me = rank_;
  if (on != comm_) MPI_Comm_rank(on, &me);
  return peer == me;
}

int CountedComm::items(const MPI_Status& status, MPI_Datatype type) {
  int count = 0;
  MPI_Get_count(&status, type, &count);
  return count;
}

// An empty status (a null request's) counts nothing.
int CountedComm::count_arrived(const MPI_Status& status, MPI_Datatype type) {
  const int count = items(status, type);
  add_bytes(0, bytes_of(count, type));
  return count;
}

}  // namespace mpisgd
