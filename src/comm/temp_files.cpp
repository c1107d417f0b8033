#include "comm/temp_files.h"

#include <atomic>
#include <climits>
#include <csignal>
#include <cstring>

#include <unistd.h>

namespace mpisgd {
namespace {

// Fixed storage: a signal handler may neither allocate nor take locks. A slot's path is
// written before it is marked used, and marked free before it is reused.
constexpr int kSlots = 16;
char paths[kSlots][PATH_MAX];
std::atomic<bool> used[kSlots];

void on_terminate(int sig) {
  remove_temp_files();
  std::signal(sig, SIG_DFL);
  std::raise(sig);
}

}  // namespace

void install_temp_file_cleanup() {
  struct sigaction action = {};
  action.sa_handler = on_terminate;
  sigemptyset(&action.sa_mask);
  for (int sig : {SIGTERM, SIGINT, SIGHUP}) sigaction(sig, &action, nullptr);
}

void remove_temp_files() noexcept {
  for (int i = 0; i < kSlots; ++i)
    if (used[i].load(std::memory_order_acquire)) unlink(paths[i]);
}

TempFileGuard::TempFileGuard(const std::string& path) {
  if (path.size() >= PATH_MAX) return;
  for (int i = 0; i < kSlots; ++i) {
    if (used[i].load(std::memory_order_relaxed)) continue;
    std::memcpy(paths[i], path.c_str(), path.size() + 1);
    used[i].store(true, std::memory_order_release);
    slot_ = i;
    return;
  }
}

TempFileGuard::~TempFileGuard() {
  if (slot_ >= 0) used[slot_].store(false, std::memory_order_release);
}

}  // namespace mpisgd
