#include "profile/progress_line.h"

#include <cstdio>
#include <unistd.h>

#include <fmt/format.h>
#include <mpi.h>

namespace mpisgd {
namespace {
constexpr double kFirstAfter = 2.0, kEvery = 1.0;
}

ProgressLine::ProgressLine(bool enabled, int epoch, int ranks)
    : enabled_(enabled && isatty(STDERR_FILENO)), epoch_(epoch), ranks_(ranks), start_(MPI_Wtime()), next_(start_ + kFirstAfter) {}

void ProgressLine::update(uint64_t rows, double loss_sum) {
  if (!enabled_) return;
  double now = MPI_Wtime();
  if (now < next_) return;
  next_ = now + kEvery;
  double since = rows > last_rows_ ? (loss_sum - last_loss_) / static_cast<double>(rows - last_rows_) : 0;
  double avg = rows ? loss_sum / static_cast<double>(rows) : 0;
  double seen = static_cast<double>(rows) * ranks_;
  fmt::print(stderr, "\r  epoch {:>3} {:>7.1f} s  avg loss {:.5f}  since last {:.5f}  rows ~{:.3g}  rows/s ~{:.3g}   ",
             epoch_, now - start_, avg, since, seen, seen / (now - start_));
  std::fflush(stderr);
  last_rows_ = rows;
  last_loss_ = loss_sum;
  shown_ = true;
}

void ProgressLine::finish() {
  if (!shown_) return;
  fmt::print(stderr, "\r{:120}\r", "");
  std::fflush(stderr);
}

}  // namespace mpisgd
