#include "ps/channel_waits.h"

#include <chrono>
#include <thread>

namespace mpisgd {

namespace {

constexpr int kSpins = 64;

// Calls `done` until it says so: yielding between calls, then sleeping.
template <typename Done>
void poll(Done done) {
  for (int tries = 0; !done(); ++tries) {
    if (tries < kSpins) std::this_thread::yield();
    else std::this_thread::sleep_for(std::chrono::microseconds(20));
  }
}

}  // namespace

void wait_all(const Channels& c, std::span<MPI_Request> requests) {
  const int n = static_cast<int>(requests.size());
  if (!c.threaded) {
    MPI_Waitall(n, requests.data(), MPI_STATUSES_IGNORE);
    return;
  }
  poll([&] {
    int flag = 0;
    MPI_Testall(n, requests.data(), &flag, MPI_STATUSES_IGNORE);
    return flag != 0;
  });
}

void probe(const Channels& c, int source, int tag, MPI_Comm comm, MPI_Status& status) {
  if (!c.threaded) {
    MPI_Probe(source, tag, comm, &status);
    return;
  }
  poll([&] {
    int flag = 0;
    MPI_Iprobe(source, tag, comm, &flag, &status);
    return flag != 0;
  });
}

void receive(CountedComm& counter, const Channels& c, void* data, int bytes, int source, int tag, MPI_Comm comm) {
  if (!c.threaded) {
    counter.recv(data, bytes, MPI_BYTE, source, tag, comm);
    return;
  }
  MPI_Request r = counter.irecv(data, bytes, MPI_BYTE, source, tag, comm);
  wait_all(c, std::span(&r, 1));
}

void send(CountedComm& counter, const Channels& c, const void* data, int bytes, int dest, int tag, MPI_Comm comm) {
  if (!c.threaded) {
    counter.send(data, bytes, MPI_BYTE, dest, tag, comm);
    return;
  }
  MPI_Request r = counter.isend(data, bytes, MPI_BYTE, dest, tag, comm);
  wait_all(c, std::span(&r, 1));
}

}  // namespace mpisgd
