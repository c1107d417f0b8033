#pragma once
// Errors that end the whole job. Every rank must leave with a non-zero exit and no rank
// may hang waiting for a peer that already gave up, so errors found inside a collective
// phase are agreed on by all ranks (agree_on_error) before anyone leaves.
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>

#include <mpi.h>

namespace mpisgd {

// Bad input: carries where it was found so the message can say "file:line: cause".
class InputError : public std::runtime_error {
 public:
  InputError(std::string file, uint64_t line, const std::string& cause)
      : std::runtime_error(format(file, line, cause)), file_(std::move(file)), line_(line) {}
  const std::string& file() const { return file_; }
  uint64_t line() const { return line_; }  // 0 when the cause has no line

 private:
  static std::string format(const std::string& file, uint64_t line, const std::string& cause) {
    return line ? file + ":" + std::to_string(line) + ": " + cause : file + ": " + cause;
  }
  std::string file_;
  uint64_t line_;
};

// Thrown on every rank once the ranks agreed that the job failed; `what()` is the one
// message the job reports (rank 0 prints it).
class JobFailed : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// One rank's possible failure in a collective phase. `order` ranks failures so the job
// reports the first one in the input (e.g. the global line number), ties broken by rank.
struct LocalFailure {
  uint64_t order = 0;
  std::string message;
};

// Collective over `comm`: if any rank failed, every rank throws JobFailed with the
// message of the failure with the smallest (order, rank). Returns normally otherwise.
void agree_on_error(MPI_Comm comm, const std::optional<LocalFailure>& local);

// Ends every rank of `comm`'s job now, from a rank that just logged why. The launcher
// forwards a rank's output on its own schedule and ends that forwarding with the job, so
// the message is flushed and given a moment to leave before MPI_Abort.
[[noreturn]] void abort_job(MPI_Comm comm);

// Runs `fn` on rank `root` only (e.g. writing a file) and makes its failure everyone's.
template <class Fn>
void run_on_root(MPI_Comm comm, int root, Fn&& fn) {
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  std::optional<LocalFailure> failure;
  if (rank == root) {
    try {
      fn();
    } catch (const std::exception& e) {
      failure = LocalFailure{0, e.what()};
    }
  }
  agree_on_error(comm, failure);
}

}  // namespace mpisgd
