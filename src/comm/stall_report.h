#pragma once
// The watchdog's decisions, kept free of MPI and threads so they can be tested alone:
// when a wait has lasted too long, what each rank reports about itself, and the one
// message that names the ranks that did not answer and what the others were waiting in.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "comm/wait_board.h"

namespace mpisgd {

enum class Activity : int32_t { computing, waiting, serving };

// What a rank's watchdog answers when asked; sent as bytes between the watchdog threads
// of one job (one binary, so one layout).
struct RankState {
  Activity activity = Activity::computing;
  int32_t tripped = 0;  // this rank's own wait ran past the limit
  double waited_s = 0;  // in the current wait
  uint64_t waits = 0;   // waits entered so far
  char op[48] = {};
};

// True when the main thread has been inside one watched wait for more than `timeout_s`.
// Idle waits (a server waiting for requests) never count.
bool wait_timed_out(const WaitSnapshot& s, int64_t now_ns, double timeout_s);

RankState rank_state(const WaitSnapshot& s, int64_t now_ns, bool tripped);

// `by_rank[r]` is empty when rank r did not answer within `grace_s`.
std::string stall_message(const std::vector<std::optional<RankState>>& by_rank, double timeout_s, double grace_s);

// The rank that prints the report: the lowest one that tripped and answered, so several
// ranks tripping together give one message. -1 if none.
int reporting_rank(const std::vector<std::optional<RankState>>& by_rank);

// Without MPI_THREAD_MULTIPLE the watchdog cannot ask its peers: it says what it saw.
std::string local_stall_message(int rank, const RankState& self, double timeout_s);

}  // namespace mpisgd
