#include "comm/shared_slots.h"

#include <sys/statvfs.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <stdexcept>
#include <string>

#include "comm/node_facts.h"
#include "comm/simulation.h"

namespace mpisgd {

namespace {

// Whether the MPI library was told to carry even a node's messages over the network: Open
// MPI's transports listed without its shared-memory one (vader; sm from 5.0) or with it
// excluded, or MPICH's NOLOCAL. Such a run means to measure the network (as
// scripts/slow_network.sh does), which a shared window would bypass.
bool local_transport_refused() {
  if (const char* btl = std::getenv("OMPI_MCA_btl")) {
    const std::string list(btl);
    const bool names_sm = list.find("vader") != std::string::npos || list.find("sm") != std::string::npos;
    if (!list.empty() && (list[0] == '^' ? names_sm : !names_sm)) return true;
  }
  for (const char* name : {"MPIR_CVAR_NOLOCAL", "MPIR_CVAR_CH3_NOLOCAL", "MPIR_CVAR_CH4_NOLOCAL"}) {
    const char* value = std::getenv(name);
    if (value && std::string(value) != "0") return true;
  }
  return false;
}

}  // namespace

uint64_t shared_window_room(MPI_Comm comm) {
  if (kSimulated) return 0;
  const int on_node = ranks_on_node(comm);
  int size = 0;
  MPI_Comm_size(comm, &size);
  // Signed for MPI_MIN (comm/extrema.h); a node holding only some of the ranks says 0.
  int64_t room = INT64_MAX;
  struct statvfs fs;
  if (statvfs("/dev/shm", &fs) == 0) room = static_cast<int64_t>(fs.f_bavail * fs.f_frsize / 2);
  if (on_node != size || local_transport_refused()) room = 0;
  MPI_Allreduce(MPI_IN_PLACE, &room, 1, MPI_INT64_T, MPI_MIN, comm);
  return static_cast<uint64_t>(room);
}

SharedSlots::SharedSlots(MPI_Comm comm, size_t bytes) : comm_(comm) {
  int size = 0;
  MPI_Comm_rank(comm_, &rank_);
  MPI_Comm_size(comm_, &size);
  // Each rank's slot in its own pages (noncontiguous); at least 8 bytes, since a slot of
  // none may have no address to query.
  MPI_Info info;
  MPI_Info_create(&info);
  MPI_Info_set(info, "alloc_shared_noncontig", "true");
  void* base = nullptr;
  const auto rounded = static_cast<MPI_Aint>(std::max<size_t>(8, (bytes + 7) / 8 * 8));
  const int rc = MPI_Win_allocate_shared(rounded, 8, info, comm_, &base, &win_);
  MPI_Info_free(&info);
  if (rc != MPI_SUCCESS) {
    throw std::runtime_error("MPI_Win_allocate_shared failed for " + std::to_string(bytes) + " bytes a rank");
  }
  slot_.resize(static_cast<size_t>(size));
  for (int r = 0; r < size; ++r) {
    MPI_Aint length = 0;
    int unit = 0;
    void* p = nullptr;
    MPI_Win_shared_query(win_, r, &length, &unit, &p);
    slot_[static_cast<size_t>(r)] = static_cast<std::byte*>(p);
  }
  // One passive epoch for the window's life: publish() only needs MPI_Win_sync inside it.
  MPI_Win_lock_all(MPI_MODE_NOCHECK, win_);
}

SharedSlots::~SharedSlots() {
  MPI_Win_unlock_all(win_);
  MPI_Win_free(&win_);
}

void SharedSlots::publish() {
  MPI_Win_sync(win_);
  MPI_Barrier(comm_);
  MPI_Win_sync(win_);
}

}  // namespace mpisgd
