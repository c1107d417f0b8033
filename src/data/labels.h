#pragma once
// Class labels of a binary classification problem. LIBSVM files say +1/-1, 1/0 or any two
// values; the larger one is the positive class (as +1 > -1 and 1 > 0), and the model
// file lists it first, as LIBLINEAR does for the class its decision value favours.
#include <string>
#include <vector>

#include <mpi.h>

#include "data/dataset.h"
#include "data/libsvm_parser.h"

namespace mpisgd {

struct LabelMap {
  float positive = 1;
  float negative = -1;
  float sign(float label) const { return label == positive ? 1.0f : -1.0f; }
  float label_of(double margin) const { return margin > 0 ? positive : negative; }
};

// Collective: finds the distinct labels over all ranks from each rank's first distinct
// labels (lines 0 when unknown, as for a binary cache). More than two is an error naming
// the line of the first row with a third label; one is a warning.
LabelMap agree_on_labels(const std::string& path, const std::vector<LabelSeen>& local, MPI_Comm comm);

// The first three distinct labels of rows already in memory (no line numbers).
std::vector<LabelSeen> first_distinct_labels(const Dataset& d);

// Rewrites labels to +1/-1 for training.
void to_signs(Dataset& d, const LabelMap& map);

}  // namespace mpisgd
