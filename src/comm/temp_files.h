#pragma once
// Outputs are written to a temporary and renamed at the end, so a failed run leaves no
// half-written file. A job that is aborted (a rank died, the watchdog fired) is ended by
// SIGTERM from mpirun before SIGKILL: the temporaries registered here are unlinked from
// the signal handler then, and by the watchdog before it aborts.
#include <string>

namespace mpisgd {

// Installs the SIGTERM/SIGINT/SIGHUP handler that unlinks registered temporaries and then
// dies of the same signal. Once per process, before any temporary is made.
void install_temp_file_cleanup();

// Unlinks every registered temporary; async-signal-safe.
void remove_temp_files() noexcept;

// Registers `path` for the scope's lifetime. Registering fails silently when every slot
// is taken: the file is then only left behind on a kill, as without the registry.
class TempFileGuard {
 public:
  explicit TempFileGuard(const std::string& path);
  ~TempFileGuard();
  TempFileGuard(const TempFileGuard&) = delete;
  TempFileGuard& operator=(const TempFileGuard&) = delete;

 private:
  int slot_ = -1;
};

}  // namespace mpisgd
