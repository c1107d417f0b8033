#include "comm/watchdog.h"

#include <algorithm>
#include <chrono>
#include <optional>

#include <spdlog/spdlog.h>

#include "comm/job_error.h"
#include "comm/stall_report.h"
#include "comm/temp_files.h"
#include "comm/wait_board.h"

namespace mpisgd {
namespace {

constexpr int kTagQuery = 1;
constexpr int kTagState = 2;
// How often the watchdog looks at the main thread and answers its peers: often enough
// that a peer's grace period is never spent waiting on a poll, rarely enough to be free.
constexpr auto kPoll = std::chrono::milliseconds(100);

// How long the tripped rank waits for its peers' answers: long enough for a loaded
// machine's threads to be scheduled, short against the limit itself.
double grace_s(double timeout_s) { return std::clamp(timeout_s / 2, 0.5, 5.0); }

double since_s(int64_t from_ns) { return static_cast<double>(steady_ns() - from_ns) * 1e-9; }

}  // namespace

Watchdog::Watchdog(MPI_Comm comm, double timeout_s) : timeout_s_(timeout_s), job_(comm) {
  if (timeout_s_ <= 0) return;
  int level = MPI_THREAD_SINGLE;
  MPI_Query_thread(&level);
  multiple_ = level >= MPI_THREAD_MULTIPLE;
  MPI_Comm_rank(comm, &rank_);
  MPI_Comm_size(comm, &size_);
  if (multiple_) {
    MPI_Comm_dup(comm, &comm_);
    MPI_Irecv(&query_, 1, MPI_INT, MPI_ANY_SOURCE, kTagQuery, comm_, &query_request_);
  }
  thread_ = std::thread([this] { run(); });
}

Watchdog::~Watchdog() {
  if (!thread_.joinable()) return;
  {
    std::lock_guard lock(mutex_);
    stop_ = true;
  }
  wake_.notify_one();
  thread_.join();
  if (!multiple_) return;
  MPI_Cancel(&query_request_);
  MPI_Wait(&query_request_, MPI_STATUS_IGNORE);
  MPI_Comm_free(&comm_);
}

void Watchdog::run() {
  std::unique_lock lock(mutex_);
  while (!wake_.wait_for(lock, kPoll, [this] { return stop_; })) {
    if (multiple_) answer_queries();
    if (wait_timed_out(wait_board.read(), steady_ns(), timeout_s_)) trip();
  }
}

void Watchdog::answer_queries() {
  for (;;) {
    int arrived = 0;
    MPI_Status status;
    MPI_Test(&query_request_, &arrived, &status);
    if (!arrived) return;
    const RankState state = rank_state(wait_board.read(), steady_ns(), tripped_);
    // A few dozen bytes go eagerly: the send never waits for the asker.
    MPI_Send(&state, sizeof state, MPI_BYTE, status.MPI_SOURCE, kTagState, comm_);
    MPI_Irecv(&query_, 1, MPI_INT, MPI_ANY_SOURCE, kTagQuery, comm_, &query_request_);
  }
}

void Watchdog::trip() {
  tripped_ = true;
  const RankState self = rank_state(wait_board.read(), steady_ns(), true);
  if (!multiple_) {
    spdlog::critical("{}", local_stall_message(rank_, self, timeout_s_));
    remove_temp_files();
    abort_job(job_);
  }
  const double grace = grace_s(timeout_s_);
  std::vector<RankState> answers(static_cast<size_t>(size_));
  std::vector<MPI_Request> receives(static_cast<size_t>(size_), MPI_REQUEST_NULL);
  std::vector<MPI_Request> asks(static_cast<size_t>(size_), MPI_REQUEST_NULL);
  static const int ask = 1;
  for (int r = 0; r < size_; ++r) {
    if (r == rank_) continue;
    const auto u = static_cast<size_t>(r);
    MPI_Irecv(&answers[u], sizeof(RankState), MPI_BYTE, r, kTagState, comm_, &receives[u]);
    // Never completed: a stopped rank does not take it, and the job ends either way.
    MPI_Isend(&ask, 1, MPI_INT, r, kTagQuery, comm_, &asks[u]);
  }
  std::vector<std::optional<RankState>> by_rank(static_cast<size_t>(size_));
  by_rank[static_cast<size_t>(rank_)] = self;
  const int64_t asked = steady_ns();
  int answered = 1;
  while (answered < size_ && since_s(asked) < grace) {
    answer_queries();
    for (int r = 0; r < size_; ++r) {
      const auto u = static_cast<size_t>(r);
      if (by_rank[u]) continue;
      int done = 0;
      MPI_Test(&receives[u], &done, MPI_STATUS_IGNORE);
      if (!done) continue;
      by_rank[u] = answers[u];
      ++answered;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  if (reporting_rank(by_rank) == rank_) {
    spdlog::critical("{}", stall_message(by_rank, timeout_s_, grace));
  } else {
    // A lower rank tripped too and reports; its abort normally ends this process first.
    const int64_t from = steady_ns();
    while (since_s(from) < 2 * grace) {
      answer_queries();
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
  }
  remove_temp_files();
  abort_job(job_);
}

}  // namespace mpisgd
