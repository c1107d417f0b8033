#pragma once
// The blocking MPI calls of the parameter-server protocol, on its channels (channels.h).
// With one MPI thread per rank (dedicated servers) they are MPI's own blocking calls.
// Co-located servers put two threads of a rank in MPI at once, and there a thread that
// blocks inside MPI can starve the other: Debian's MPICH guards the library with one
// lock that a thread spinning in MPI_Waitall takes back at once after each progress
// pass, so its rank's server thread, asleep on the lock, never answers (a one-rank
// co-located job made no step in minutes). On such channels a wait tests, yields, and
// after kSpins tries sleeps between tests, leaving the lock and the core to the other
// thread: a reply that comes within a few tries costs no sleep.
// Messages are counted on the CountedComm given, by its rules: those between a worker
// and its own co-located server stay in memory and count nothing.
#include <mpi.h>

#include <span>

#include "comm/counted_comm.h"
#include "ps/channels.h"

namespace mpisgd {

void wait_all(const Channels& c, std::span<MPI_Request> requests);
void probe(const Channels& c, int source, int tag, MPI_Comm comm, MPI_Status& status);
void receive(CountedComm& counter, const Channels& c, void* data, int bytes, int source, int tag, MPI_Comm comm);
void send(CountedComm& counter, const Channels& c, const void* data, int bytes, int dest, int tag, MPI_Comm comm);

}  // namespace mpisgd
