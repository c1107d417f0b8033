#pragma once
// Ends the job when this rank's main thread has been inside one communication wait (a
// CountedComm::Timed scope) for longer than the limit: a peer that stopped without dying
// (SIGSTOP, a hung file system, a lost link) would otherwise keep every rank waiting
// forever. Time spent computing, loading or writing is never watched.
//
// With MPI_THREAD_MULTIPLE the watchdog threads talk on their own communicator: the one
// that trips asks every rank what it is doing, and a rank whose watchdog does not answer
// within a grace period is named as the stalled one (a stopped process's threads are all
// stopped). Without it, the message says only what this rank waited in.
#include <condition_variable>
#include <mutex>
#include <thread>
#include <vector>

#include <mpi.h>

namespace mpisgd {

class Watchdog {
 public:
  // Collective over `comm`. `timeout_s` 0 watches nothing and starts no thread.
  Watchdog(MPI_Comm comm, double timeout_s);
  ~Watchdog();  // collective: every rank stops its watchdog before MPI_Finalize
  Watchdog(const Watchdog&) = delete;
  Watchdog& operator=(const Watchdog&) = delete;

  // Whether peers can be asked (MPI_THREAD_MULTIPLE granted).
  bool names_peers() const { return multiple_; }

 private:
  void run();
  void answer_queries();
  [[noreturn]] void trip();

  double timeout_s_;
  bool multiple_ = false;
  MPI_Comm job_;
  MPI_Comm comm_ = MPI_COMM_NULL;  // the watchdogs' own
  int rank_ = 0, size_ = 1;
  int query_ = 0;  // receive buffer of the standing query receive
  MPI_Request query_request_ = MPI_REQUEST_NULL;
  bool tripped_ = false;
  std::mutex mutex_;
  std::condition_variable wake_;
  bool stop_ = false;
  std::thread thread_;
};

}  // namespace mpisgd
