#pragma once
// Memory that every rank of a one-node communicator reads: a slot per rank in one MPI-3
// shared window (MPI_Win_allocate_shared), so that data crosses between the ranks as
// loads from the writer's pages, with no message and no copy into a receive buffer.
// Portable across Open MPI and MPICH; never used in a simulated run (comm/simulation.h),
// whose ranks stand for separate hosts.
#include <cstddef>
#include <cstdint>
#include <vector>

#include <mpi.h>

namespace mpisgd {

// Collective over `comm`: the bytes a shared window of its ranks may take. None unless all
// of them run on one node, the run is not simulated, and the MPI library was not told to
// keep a node's messages off shared memory. There, half the space free in /dev/shm, where
// Linux MPIs back shared windows (a container's is often 64 MiB, and a window that does
// not fit ends the job inside MPI), the other half left to MPI's own segments; unbounded
// where there is no /dev/shm. The same on every rank.
uint64_t shared_window_room(MPI_Comm comm);

class SharedSlots {
 public:
  // Collective over `comm`, whose shared_window_room() holds the slots: a slot of `bytes`
  // for each rank, 8-byte aligned. Pages are mapped as they are first written.
  SharedSlots(MPI_Comm comm, size_t bytes);
  ~SharedSlots();
  SharedSlots(const SharedSlots&) = delete;
  SharedSlots& operator=(const SharedSlots&) = delete;

  std::byte* mine() { return slot_[static_cast<size_t>(rank_)]; }
  const std::byte* of(int rank) const { return slot_[static_cast<size_t>(rank)]; }

  // Collective: what each rank wrote to the window before the call, every rank can read
  // after it (a memory fence, a barrier, a fence).
  void publish();

 private:
  MPI_Comm comm_;
  MPI_Win win_ = MPI_WIN_NULL;
  int rank_ = 0;
  std::vector<std::byte*> slot_;
};

}  // namespace mpisgd
