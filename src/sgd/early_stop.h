#pragma once
// Stopping before --epochs, scikit-learn's rule for SGDClassifier without a validation
// set: training ends once the epoch's training loss has failed `patience` epochs in a row
// to beat the best loss so far by `tol` (absolute). The loss is the one the profile
// prints, so the decision can be read off the table; every rank makes it from the same
// broadcast value and so stops at the same epoch.
#include <string>

#include "comm/state_blob.h"

namespace mpisgd {

struct EarlyStopOptions {
  bool enabled = true;  // --no-early-stop turns it off
  double tol = 1e-3;    // --tol
  int patience = 5;     // --n-iter-no-change
};

class EarlyStop {
 public:
  explicit EarlyStop(const EarlyStopOptions& o) : options_(o) {}

  // Takes the loss of the epoch just finished; true when training should stop here. A
  // loss that is not finite counts as no improvement.
  bool after_epoch(double loss);
  bool stopped() const { return options_.enabled && stale_ >= options_.patience; }
  // Why training stopped, for the log; meaningful once stopped() is true.
  std::string reason() const;

  // Carried by checkpoints, so a resumed run stops where the uninterrupted one would.
  void save_state(StateWriter& out) const;
  void load_state(StateReader& in);

 private:
  EarlyStopOptions options_;
  double best_ = 0;
  bool seen_ = false;  // best_ holds a loss
  int stale_ = 0;      // epochs in a row without an improvement by tol
};

}  // namespace mpisgd
