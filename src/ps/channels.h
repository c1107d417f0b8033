#pragma once
// The communicators the parameter-server protocol (messages.h) travels on. Requests
// (pull, push, done) go to where the servers probe, values come back where the workers
// wait for them. Dedicated servers use the strategy's communicator for both. Co-located
// servers (--servers colocated) are a second thread on every rank, so each channel is a
// communicator of its own that one thread of a rank receives on: the server thread's
// wildcard probe for requests can never take a reply meant for the training thread, nor
// the reverse.
#include <mpi.h>

namespace mpisgd {

struct Channels {
  MPI_Comm requests;      // workers send, servers receive
  MPI_Comm replies;       // servers send, workers receive
  bool threaded = false;  // two threads of a rank use MPI at once (channel_waits.h)
};

// A duplicate of a communicator for one channel: collective to make and to free.
class ChannelComm {
 public:
  explicit ChannelComm(MPI_Comm comm) { MPI_Comm_dup(comm, &comm_); }
  ~ChannelComm() { MPI_Comm_free(&comm_); }
  ChannelComm(const ChannelComm&) = delete;
  ChannelComm& operator=(const ChannelComm&) = delete;

  MPI_Comm raw() const { return comm_; }

 private:
  MPI_Comm comm_;
};

}  // namespace mpisgd
