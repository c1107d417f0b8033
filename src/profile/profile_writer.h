#pragma once
// Writes epoch summaries as CSV (path ending in .csv) or JSON lines (.jsonl/.json) to a
// temporary file that commit() renames into place; destroyed uncommitted, it removes the
// temporary, so a failed run leaves no half-written profile.
#include <fstream>
#include <string>

#include "profile/epoch_profile.h"

namespace mpisgd {

struct RunInfo {
  std::string strategy;
  std::string model;
  int threads = 1;
  uint32_t dim = 0;
  bool classification = true;
  bool parameter_server = false;  // adds the parameter-server columns
};

class ProfileWriter {
 public:
  ProfileWriter(const std::string& path, RunInfo info);
  ~ProfileWriter();
  ProfileWriter(const ProfileWriter&) = delete;
  ProfileWriter& operator=(const ProfileWriter&) = delete;

  void write(const EpochSummary& s);
  void commit();

 private:
  std::string path_, tmp_;
  RunInfo info_;
  bool json_;
  bool committed_ = false;
  std::ofstream out_;
};

}  // namespace mpisgd
