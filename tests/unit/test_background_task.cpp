// BackgroundTask: jobs run on its thread one at a time, wait() returns once the job is done
// and rethrows what it threw, and misuse is an error, not a race.
#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <stdexcept>
#include <thread>

#include "ps/background_task.h"

using mpisgd::BackgroundTask;

TEST_CASE("a background task runs each job on its own thread, once", "[background]") {
  BackgroundTask task;
  REQUIRE_FALSE(task.started());
  REQUIRE_NOTHROW(task.wait());  // nothing started: returns at once
  const std::thread::id caller = std::this_thread::get_id();
  std::thread::id ran_on;
  int runs = 0;
  for (int n = 1; n <= 3; ++n) {
    task.start([&] {
      ran_on = std::this_thread::get_id();
      ++runs;
    });
    REQUIRE(task.started());
    task.wait();
    REQUIRE_FALSE(task.started());
    REQUIRE(task.finished());
    REQUIRE(runs == n);
    REQUIRE(ran_on != caller);
  }
}

TEST_CASE("a background task reports a job still running, and refuses a second one", "[background]") {
  BackgroundTask task;
  std::atomic<bool> release{false};
  task.start([&] {
    while (!release) std::this_thread::yield();
  });
  REQUIRE_FALSE(task.finished());
  REQUIRE_THROWS_AS(task.start([] {}), std::logic_error);
  release = true;
  task.wait();
  REQUIRE(task.finished());
}

TEST_CASE("a background task's exception comes out of wait(), and the task goes on", "[background]") {
  BackgroundTask task;
  task.start([] { throw std::runtime_error("the exchange failed"); });
  REQUIRE_THROWS_WITH(task.wait(), "the exchange failed");
  int runs = 0;
  task.start([&] { ++runs; });
  REQUIRE_NOTHROW(task.wait());
  REQUIRE(runs == 1);
}

TEST_CASE("a background task's destructor lets a started job finish", "[background]") {
  std::atomic<int> runs{0};
  {
    BackgroundTask task;
    task.start([&] {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
      ++runs;
    });
  }
  REQUIRE(runs == 1);
}
