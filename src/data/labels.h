#pragma once
// Class labels. LIBSVM files say +1/-1, 1/0 or any values. With two, the larger one is the
// positive class (as +1 > -1 and 1 > 0), and the model file lists it first, as LIBLINEAR
// does for the class its decision value favours. With K >= 3 the classes keep LIBLINEAR's
// order, that of their first rows in the training file, and the model holds one weight
// column per class in that order (model/loss.h).
#include <cstdint>
#include <string>
#include <vector>

#include <mpi.h>

#include "data/dataset.h"
#include "data/libsvm_parser.h"

namespace mpisgd {

struct LabelMap {
  float positive = 1;
  float negative = -1;
  std::vector<float> classes;  // K >= 3 only: the labels, column c's at [c]

  // Weight columns: 1 for two classes, K for more.
  uint32_t columns() const { return classes.empty() ? 1 : static_cast<uint32_t>(classes.size()); }
  float sign(float label) const { return label == positive ? 1.0f : -1.0f; }
  float label_of(double margin) const { return margin > 0 ? positive : negative; }
  // The column of a label, or -1 for a label the training rows did not have.
  int64_t column_of(float label) const;
};

// Collective: finds the distinct labels over all ranks from each rank's first distinct
// labels (lines 0 when unknown, as for a binary cache). More than kMostClasses is an error
// naming the line of the first row with one too many; one is a warning.
LabelMap agree_on_labels(const std::string& path, const std::vector<LabelSeen>& local, MPI_Comm comm);

// The first kMostClasses + 1 distinct labels of rows already in memory (no line numbers).
std::vector<LabelSeen> first_distinct_labels(const Dataset& d);

// Rewrites labels for training: to +1/-1 with two classes, to the column 0..K-1 with more.
// Returns the rows of each class on this rank (positive first with two).
std::vector<uint64_t> to_training_labels(Dataset& d, const LabelMap& map);

// Collective: the classes and their rows over all ranks, on rank 0's log.
void log_classes(const std::string& path, const LabelMap& map, const std::vector<uint64_t>& rows, MPI_Comm comm);

// Collective: test rows whose label the training rows lacked are counted wrong by every
// evaluation; rank 0 names those labels and their rows once here.
void warn_unseen_labels(const std::string& path, const Dataset& test, const LabelMap& map, MPI_Comm comm);

}  // namespace mpisgd
