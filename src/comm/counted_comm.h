#pragma once
// The communicator strategies and collectives talk through. It counts seconds and bytes
// so that profiles and benchmarks compare volumes with the analytical bounds, free of
// machine noise. Metrics that are not part of the algorithm (loss sums, hashes) use the
// raw MPI_Comm and stay out of these counters.
#include <cstddef>
#include <cstdint>

#include <mpi.h>

#include "comm/wait_board.h"

namespace mpisgd {

struct CommStats {
  double seconds = 0;
  uint64_t bytes_sent = 0;
  uint64_t bytes_received = 0;

  CommStats operator-(const CommStats& o) const {
    return {seconds - o.seconds, bytes_sent - o.bytes_sent, bytes_received - o.bytes_received};
  }
  CommStats operator+(const CommStats& o) const {
    return {seconds + o.seconds, bytes_sent + o.bytes_sent, bytes_received + o.bytes_received};
  }
};

template <class T> MPI_Datatype mpi_type();
template <> inline MPI_Datatype mpi_type<float>() { return MPI_FLOAT; }
template <> inline MPI_Datatype mpi_type<double>() { return MPI_DOUBLE; }
template <> inline MPI_Datatype mpi_type<uint32_t>() { return MPI_UINT32_T; }
template <> inline MPI_Datatype mpi_type<uint64_t>() { return MPI_UINT64_T; }

// Collective construction and destruction: the library talks on its own duplicate of
// the caller's communicator (MPI_Comm_dup, as libraries do), so that its fixed tags can
// never match an application's receives on `comm`, wildcard ones included, nor the reverse.
// A CountedComm belongs to one thread. The main thread's waits are what the watchdog
// watches (wait_board.h); a second thread that communicates (a co-located parameter
// server, an overlapping push/pull thread) gets a CountedComm of its own made with
// Thread::background, whose waits leave the board alone and whose counters the strategy
// adds to its epoch's record.
class CountedComm {
 public:
  enum class Thread { main, background };
  explicit CountedComm(MPI_Comm comm, Thread thread = Thread::main);
  ~CountedComm();
  CountedComm(const CountedComm&) = delete;
  CountedComm& operator=(const CountedComm&) = delete;

  MPI_Comm raw() const { return comm_; }
  int rank() const { return rank_; }
  int size() const { return size_; }
  const CommStats& stats() const { return stats_; }

  // In-place sum over all ranks. MPI hides its algorithm, so the bytes counted are the
  // volume of a bandwidth-optimal allreduce (reduce-scatter + allgather, as in ring or
  // Rabenseifner): 2 (P-1)/P * n * sizeof(T) sent and as much received per rank.
  template <class T>
  void allreduce_sum(T* data, size_t n) {
    allreduce_sum_bytes(data, n, mpi_type<T>(), sizeof(T));
  }

  // Collectives written on raw MPI calls report what they moved themselves.
  void count_sent(uint64_t bytes) { stats_.bytes_sent += bytes; }
  void count_received(uint64_t bytes) { stats_.bytes_received += bytes; }

  // Counts the seconds from construction to destruction as communication; nested scopes
  // (a collective built on allreduce_sum) count once. The outermost scope is also the wait
  // the watchdog watches: `op` names it in a stall report.
  class Timed {
   public:
    explicit Timed(CountedComm& c, const char* op = "a strategy exchange", WaitKind kind = WaitKind::exchange)
        : comm_(c), start_(MPI_Wtime()) {
      if (comm_.timing_depth_++ == 0 && comm_.watched_) wait_board.enter(op, kind);
    }
    ~Timed() {
      if (--comm_.timing_depth_ != 0) return;
      if (comm_.watched_) wait_board.leave();
      comm_.stats_.seconds += MPI_Wtime() - start_;
    }
    Timed(const Timed&) = delete;
    Timed& operator=(const Timed&) = delete;

   private:
    CountedComm& comm_;
    double start_;
  };

 private:
  void allreduce_sum_bytes(void* data, size_t n, MPI_Datatype type, size_t elem_bytes);

  MPI_Comm comm_;
  int rank_ = 0;
  int size_ = 1;
  CommStats stats_;
  int timing_depth_ = 0;
  bool watched_ = true;
};

// MPI counts are int: calls on more elements go in pieces of at most this many.
inline constexpr size_t kMaxMpiCount = size_t{1} << 30;

}  // namespace mpisgd
