#pragma once
// One job at a time on a thread of its own: the parameter servers' --overlap hands a
// worker's push and pull to it and goes on computing (Marian thesis section 3.4, overlap
// by double buffering). The thread lives as long as the object, so a job costs a wake-up,
// not a thread start. A job's exception comes back out of wait().
#include <condition_variable>
#include <exception>
#include <functional>
#include <mutex>
#include <thread>

namespace mpisgd {

class BackgroundTask {
 public:
  BackgroundTask();
  ~BackgroundTask();
  BackgroundTask(const BackgroundTask&) = delete;
  BackgroundTask& operator=(const BackgroundTask&) = delete;

  // Starts `job`. Throws std::logic_error if one is still running or unwaited.
  void start(std::function<void()> job);
  // True when a job was started and has not been waited for.
  bool started() const { return started_; }
  // True once the started job finished; never blocks.
  bool finished() const;
  // Returns once the started job finished, rethrowing what it threw.
  void wait();

 private:
  void run();

  mutable std::mutex mutex_;
  std::condition_variable wake_;
  std::function<void()> job_;
  std::exception_ptr error_;
  bool running_ = false;  // under mutex_: a job is queued or running
  bool quit_ = false;
  bool started_ = false;  // the owner's side: start() called, wait() not yet
  std::thread thread_;
};

}  // namespace mpisgd
