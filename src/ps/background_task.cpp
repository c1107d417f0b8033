#include "ps/background_task.h"

#include <stdexcept>
#include <utility>

namespace mpisgd {

BackgroundTask::BackgroundTask() : thread_([this] { run(); }) {}

BackgroundTask::~BackgroundTask() {
  {
    std::lock_guard lock(mutex_);
    quit_ = true;
  }
  wake_.notify_all();
  thread_.join();
}

void BackgroundTask::start(std::function<void()> job) {
  if (started_) throw std::logic_error("background task: a job was started before the last one was waited for");
  {
    std::lock_guard lock(mutex_);
    job_ = std::move(job);
    running_ = true;
  }
  started_ = true;
  wake_.notify_all();
}

bool BackgroundTask::finished() const {
  std::lock_guard lock(mutex_);
  return !running_;
}

void BackgroundTask::wait() {
  if (!started_) return;
  std::unique_lock lock(mutex_);
  wake_.wait(lock, [this] { return !running_; });
  started_ = false;
  if (error_) std::rethrow_exception(std::exchange(error_, nullptr));
}

void BackgroundTask::run() {
  std::unique_lock lock(mutex_);
  for (;;) {
    wake_.wait(lock, [this] { return running_ || quit_; });
    // A queued job runs even when quitting: its owner may be waiting for it.
    if (!running_) return;
    std::function<void()> job = std::move(job_);
    lock.unlock();
    std::exception_ptr error;
    try {
      job();
    } catch (...) {
      error = std::current_exception();
    }
    lock.lock();
    error_ = error;
    running_ = false;
    wake_.notify_all();
  }
}

}  // namespace mpisgd
