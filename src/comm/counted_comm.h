#pragma once
// The communicator strategies and collectives talk through. It counts seconds and bytes
// so that profiles and benchmarks compare volumes with the analytical bounds, free of
// machine noise. Every byte an algorithm moves goes through one of its operations, and
// each counts what it carries, per rank: the bytes that leave this rank and the bytes
// that arrive from other ranks; a rank's own share never counts. Where MPI hides how a
// collective moves its data, the operation counts what a bandwidth-optimal algorithm
// would, and says which. Metrics that are not part of the algorithm (loss sums, hashes)
// use the raw MPI_Comm and stay out of these counters.
#include <cstddef>
#include <cstdint>
#include <span>
#include <type_traits>

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
template <> inline MPI_Datatype mpi_type<int>() { return MPI_INT; }
template <> inline MPI_Datatype mpi_type<int64_t>() { return MPI_INT64_T; }
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
//
// Only allreduce_sum times itself, since strategies call it on its own; the other
// operations are steps of an exchange that its caller times as a whole with Timed.
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

  // The largest `value` over all ranks: a double or a signed integer (comm/extrema.h says
  // why no unsigned one). Counted as the value once each way, whatever P. imax only
  // posts it (`value` and `result` must live until it completes), counted as posted.
  template <class T>
  T max(T value) {
    static_assert(std::is_signed_v<T>, "MPI_MAX on unsigned types is unreliable (comm/extrema.h)");
    T result{};
    MPI_Allreduce(&value, &result, 1, mpi_type<T>(), MPI_MAX, comm_);
    add_bytes(sizeof(T), sizeof(T));
    return result;
  }
  template <class T>
  MPI_Request imax(const T* value, T* result) {
    static_assert(std::is_signed_v<T>, "MPI_MAX on unsigned types is unreliable (comm/extrema.h)");
    MPI_Request r;
    MPI_Iallreduce(value, result, 1, mpi_type<T>(), MPI_MAX, comm_, &r);
    add_bytes(sizeof(T), sizeof(T));
    return r;
  }

  // all = every rank's n values `mine`, in rank order. Counted as a bandwidth-optimal
  // allgather: every rank receives, and forwards, the (P-1) n values of the others.
  template <class T>
  void allgather(const T* mine, int n, T* all) {
    MPI_Allgather(mine, n, mpi_type<T>(), all, n, mpi_type<T>(), comm_);
    const uint64_t others = (static_cast<uint64_t>(size_) - 1) * static_cast<uint64_t>(n) * sizeof(T);
    add_bytes(others, others);
  }

  // Rank r's counts[r] items of `type`, from its `mine` (MPI_IN_PLACE: already at
  // displs[r] of its `all`), to displs[r] of every rank's `all`. Counted as above: all
  // other ranks' items, each way.
  void allgatherv(const void* mine, void* all, const int* counts, const int* displs, MPI_Datatype type);

  // in: n values, n the sum of counts (one per rank of `on`, which is this communicator
  // or one over some of its ranks, such as a group's); the ranks of `on` sum them, and
  // rank r keeps counts[r] of the sums, in rank order, in `mine`. Counted as a
  // bandwidth-optimal reduce-scatter: the n - counts[r] values of the other ranks'
  // parts, each way.
  template <class T>
  void reduce_scatter_sum(const T* in, T* mine, const int* counts, MPI_Comm on) {
    reduce_scatter_sum_bytes(in, mine, counts, mpi_type<T>(), sizeof(T), on);
  }

  // The root's n values to every rank. Counted as one copy per rank: they leave the root
  // once, and every other rank takes them in.
  template <class T>
  void bcast(T* data, size_t n, int root) {
    bcast_bytes(data, n, mpi_type<T>(), sizeof(T), root);
  }

  // Messages of `count` items of `type` between two ranks of `on`: this communicator
  // (left out) or one over the same processes (a parameter server's channel) or some of
  // them (a group's); dest, source and partner are ranks of `on`. A message between a
  // rank and itself (to its co-located server) is a copy in memory and counts nothing. A
  // send counts what leaves, when it is posted; a receive what arrives: recv when it
  // returns, irecv, of a message of exactly `count` items, when it is posted, and
  // irecv_upto, of raw bytes from another rank, as many as came (known only once they are
  // in), when wait_received or wait_any_received completes it. Each receive returns, or
  // sets `bytes` to, the number of items that arrived.
  void send(const void* data, int count, MPI_Datatype type, int dest, int tag, MPI_Comm on = MPI_COMM_NULL);
  int recv(void* data, int capacity, MPI_Datatype type, int source, int tag, MPI_Comm on = MPI_COMM_NULL);
  int sendrecv(const void* out, int out_count, void* in, int in_capacity, MPI_Datatype type, int partner, int tag,
                MPI_Comm on = MPI_COMM_NULL);
  MPI_Request isend(const void* data, int count, MPI_Datatype type, int dest, int tag, MPI_Comm on = MPI_COMM_NULL);
  MPI_Request irecv(void* data, int count, MPI_Datatype type, int source, int tag, MPI_Comm on = MPI_COMM_NULL);
  MPI_Request irecv_upto(void* data, int capacity_bytes, int source, int tag, MPI_Comm on = MPI_COMM_NULL);
  int wait_received(MPI_Request& receive);
  // Returns the index in `receives` of the one completed.
  int wait_any_received(std::span<MPI_Request> receives, int* bytes = nullptr);

  // Bytes that crossed through a shared window (comm/shared_slots.h) instead of a
  // message: those other ranks read from this rank's slot, and those it read from theirs.
  void count_shared(uint64_t sent, uint64_t received) { add_bytes(sent, received); }

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
  void reduce_scatter_sum_bytes(const void* in, void* mine, const int* counts, MPI_Datatype type, size_t elem_bytes,
                                MPI_Comm on);
  void bcast_bytes(void* data, size_t n, MPI_Datatype type, size_t elem_bytes, int root);
  void add_bytes(uint64_t sent, uint64_t received) {
    stats_.bytes_sent += sent;
    stats_.bytes_received += received;
  }
  MPI_Comm or_this(MPI_Comm on) const { return on == MPI_COMM_NULL ? comm_ : on; }
  bool is_self(int peer, MPI_Comm on) const;
  static int items(const MPI_Status& status, MPI_Datatype type);
  int count_arrived(const MPI_Status& status, MPI_Datatype type);

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
