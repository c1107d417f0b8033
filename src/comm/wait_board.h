#pragma once
// What the main thread is waiting in right now, for the watchdog thread to read. Written
// on every communication wait (CountedComm::Timed), so it is a handful of relaxed stores
// and one clock read: nothing the hot path can measure.
#include <atomic>
#include <chrono>
#include <cstdint>

namespace mpisgd {

// A parameter-server shard waits for requests while its workers compute: that wait is
// idle, not stalled, and never trips the watchdog on its own rank.
enum class WaitKind : uint8_t { exchange, idle };

struct WaitSnapshot {
  int64_t since_ns = 0;  // steady clock; 0: not inside a wait
  WaitKind kind = WaitKind::exchange;
  const char* op = nullptr;
  uint64_t waits = 0;  // waits entered so far: how far this rank got
};

inline int64_t steady_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

class WaitBoard {
 public:
  void enter(const char* op, WaitKind kind) noexcept {
    kind_.store(kind, std::memory_order_relaxed);
    op_.store(op, std::memory_order_relaxed);
    waits_.store(waits_.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
    since_ns_.store(steady_ns(), std::memory_order_release);
  }
  void leave() noexcept { since_ns_.store(0, std::memory_order_release); }

  // From another thread. The fields belong to one wait: `since_ns` is read before and
  // after the others and the read is retried if a new wait began in between.
  WaitSnapshot read() const noexcept {
    for (;;) {
      WaitSnapshot s;
      s.since_ns = since_ns_.load(std::memory_order_acquire);
      s.kind = kind_.load(std::memory_order_relaxed);
      s.op = op_.load(std::memory_order_relaxed);
      s.waits = waits_.load(std::memory_order_relaxed);
      std::atomic_thread_fence(std::memory_order_acquire);
      if (since_ns_.load(std::memory_order_relaxed) == s.since_ns) return s;
    }
  }

 private:
  std::atomic<int64_t> since_ns_{0};
  std::atomic<WaitKind> kind_{WaitKind::exchange};
  std::atomic<const char*> op_{nullptr};
  std::atomic<uint64_t> waits_{0};
};

// One per process, written by the main thread only (CountedComm::Thread).
inline WaitBoard wait_board;

// Marks a wait outside the strategies' counted exchanges (the trainer's epoch-end
// reductions and checks on the raw communicator), so that a rank stalled there is caught
// too. Not to be nested with CountedComm::Timed.
class WaitScope {
 public:
  explicit WaitScope(const char* op) noexcept { wait_board.enter(op, WaitKind::exchange); }
  ~WaitScope() { wait_board.leave(); }
  WaitScope(const WaitScope&) = delete;
  WaitScope& operator=(const WaitScope&) = delete;
};

}  // namespace mpisgd
