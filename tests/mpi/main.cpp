// Catch2 under mpirun: every rank runs every test case in the same order (the tests call
// collectives). Rank 0 reports on the console; the other ranks write to a file that is
// shown only if that rank failed, so one run prints one report.
#include <mpi.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

#include "comm/thread_level.h"
#include "mpi_test_util.h"
#include "tests/catch_session.h"

int main(int argc, char** argv) {
  // MPI_THREAD_MULTIPLE where granted, for the co-located parameter servers' threads.
  if (!mpisgd::init_mpi(argc, argv, MPI_THREAD_FUNNELED, MPI_THREAD_MULTIPLE)) return 1;
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);

  std::vector<char*> args(argv, argv + argc);
  std::string log = "/tmp/mpisgd_mpi_tests." + std::to_string(getpid()) + ".rank" + std::to_string(rank) + ".log";
  std::string out_flag = "-o";
  if (rank != 0) {
    args.push_back(out_flag.data());
    args.push_back(log.data());
  }
  int failed = run_catch_session(static_cast<int>(args.size()), args.data());
  if (rank != 0) {
    if (failed) std::cerr << "---- rank " << rank << " ----\n" << std::ifstream(log).rdbuf() << std::flush;
    std::remove(log.c_str());
  }
  MPI_Barrier(MPI_COMM_WORLD);
  mpisgd::test::remove_scratch_dir();
  int any = 0;
  MPI_Allreduce(&failed, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  MPI_Finalize();
  return any ? 1 : 0;
}
