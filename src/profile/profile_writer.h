#pragma once
// Writes epoch summaries as CSV (path ending in .csv) or JSON lines (.jsonl/.json). They
// are kept in memory (a few hundred bytes an epoch) and commit() writes them to a
// temporary renamed into place, so a failed or killed run leaves no half-written profile
// and no temporary: only a kill during commit() itself could, and then SIGTERM's cleanup
// (comm/temp_files.h) removes it.
#include <sstream>
#include <string>
#include <vector>

#include "profile/epoch_profile.h"

namespace mpisgd {

struct RunInfo {
  std::string strategy;
  std::string model;
  int threads = 1;
  uint32_t dim = 0;
  bool classification = true;
  std::vector<std::string> strategy_columns;  // Strategy::profile_columns
};

// True where `path` names JSON lines (.jsonl or .json), false for CSV (.csv); throws
// std::invalid_argument for any other name.
bool profile_is_json(const std::string& path);

class ProfileWriter {
 public:
  ProfileWriter(const std::string& path, RunInfo info);

  void write(const EpochSummary& s);
  void commit();

 private:
  std::string path_, tmp_;
  RunInfo info_;
  bool json_;
  std::ostringstream out_;
};

}  // namespace mpisgd
