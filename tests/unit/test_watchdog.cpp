// The watchdog's decisions without MPI: which waits time out, what a rank reports about
// itself, the stall message and who prints it; and that a terminated process unlinks the
// temporaries it registered.
#include <catch2/catch.hpp>

#include <csignal>
#include <cstdio>
#include <fstream>
#include <optional>
#include <string>
#include <vector>

#include <sys/wait.h>
#include <unistd.h>

#include "comm/stall_report.h"
#include "comm/temp_files.h"

using namespace mpisgd;

namespace {

constexpr int64_t kSecond = 1'000'000'000;

WaitSnapshot waiting_since(int64_t since_ns, WaitKind kind = WaitKind::exchange) {
  return WaitSnapshot{since_ns, kind, "a strategy exchange", 7};
}

RankState state(Activity activity, double waited_s, uint64_t waits, bool tripped = false, const char* op = "") {
  RankState s;
  s.activity = activity;
  s.waited_s = waited_s;
  s.waits = waits;
  s.tripped = tripped ? 1 : 0;
  std::snprintf(s.op, sizeof s.op, "%s", op);
  return s;
}

}  // namespace

TEST_CASE("a wait times out only when watched and longer than the limit", "[watchdog]") {
  const int64_t now = 100 * kSecond;
  CHECK_FALSE(wait_timed_out(WaitSnapshot{}, now, 3));
  CHECK_FALSE(wait_timed_out(waiting_since(now - 2 * kSecond), now, 3));
  CHECK(wait_timed_out(waiting_since(now - 4 * kSecond), now, 3));
  CHECK_FALSE(wait_timed_out(waiting_since(now - 400 * kSecond, WaitKind::idle), now, 3));
  CHECK_FALSE(wait_timed_out(waiting_since(now - 400 * kSecond), now, 0));
}

TEST_CASE("a rank reports what it waits in", "[watchdog]") {
  const int64_t now = 100 * kSecond;
  const RankState waiting = rank_state(waiting_since(now - 5 * kSecond), now, true);
  CHECK(waiting.activity == Activity::waiting);
  CHECK(waiting.waited_s == Approx(5));
  CHECK(waiting.waits == 7);
  CHECK(waiting.tripped == 1);
  CHECK(std::string(waiting.op) == "a strategy exchange");
  CHECK(rank_state(waiting_since(now, WaitKind::idle), now, false).activity == Activity::serving);
  CHECK(rank_state(WaitSnapshot{0, WaitKind::exchange, nullptr, 9}, now, false).activity == Activity::computing);
}

TEST_CASE("the stall message names the silent ranks and groups the others", "[watchdog]") {
  std::vector<std::optional<RankState>> by_rank(5);
  by_rank[0] = state(Activity::waiting, 3.2, 812, true, "a strategy exchange");
  by_rank[2] = state(Activity::waiting, 3.0, 812, true, "a strategy exchange");
  by_rank[3] = state(Activity::computing, 0, 811);
  by_rank[4] = state(Activity::serving, 9, 40, false, "a request");
  const std::string text = stall_message(by_rank, 3, 1.5);
  INFO(text);
  CHECK(text.find("no communication progress for 3 s (--comm-timeout)") != std::string::npos);
  CHECK(text.find("rank 1 did not answer within 1.5 s") != std::string::npos);
  CHECK(text.find("rank 3 not in a wait, still computing (after wait #811)") != std::string::npos);
  CHECK(text.find("ranks 0, 2 waiting in a strategy exchange for up to 3.2 s (wait #812)") != std::string::npos);
  CHECK(text.find("rank 4 serving") != std::string::npos);
}

TEST_CASE("the lowest tripped rank that answered reports", "[watchdog]") {
  std::vector<std::optional<RankState>> by_rank(4);
  CHECK(reporting_rank(by_rank) == -1);
  by_rank[1] = state(Activity::waiting, 1, 1, false);
  by_rank[2] = state(Activity::waiting, 4, 1, true);
  by_rank[3] = state(Activity::waiting, 4, 1, true);
  CHECK(reporting_rank(by_rank) == 2);
}

TEST_CASE("a terminated process unlinks its registered temporaries", "[watchdog]") {
  char dir[] = "/tmp/mpisgd-temp-XXXXXX";
  REQUIRE(mkdtemp(dir));
  const std::string kept = std::string(dir) + "/kept", removed = std::string(dir) + "/removed.tmp";
  std::ofstream(kept) << "x";
  const pid_t child = fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    install_temp_file_cleanup();
    std::ofstream(removed) << "half";
    TempFileGuard guard(removed);
    raise(SIGTERM);
    _exit(0);
  }
  int status = 0;
  REQUIRE(waitpid(child, &status, 0) == child);
  CHECK(WIFSIGNALED(status));
  CHECK(WTERMSIG(status) == SIGTERM);
  CHECK(access(removed.c_str(), F_OK) != 0);
  CHECK(access(kept.c_str(), F_OK) == 0);
  std::remove(kept.c_str());
  rmdir(dir);
}
