#pragma once
// While an epoch runs longer than a couple of seconds, rank 0 keeps one line up to date on
// a terminal, in the spirit of Vowpal Wabbit's running table: average loss so far, since
// the last refresh, rows seen and rows/s. Rows are rank 0's times the number of ranks
// (an estimate: counting exactly would need communication on every step).
#include <cstdint>

namespace mpisgd {

class ProgressLine {
 public:
  ProgressLine(bool enabled, int epoch, int ranks);
  void update(uint64_t local_rows, double local_loss_sum);
  void finish();

 private:
  bool enabled_;
  int epoch_, ranks_;
  double start_, next_;
  uint64_t last_rows_ = 0;
  double last_loss_ = 0;
  bool shown_ = false;
};

}  // namespace mpisgd
