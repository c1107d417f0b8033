#pragma once
// Binary cache of a LIBSVM file, read back much faster than text.
// Layout: data/cache_header.h.
// Rank r holds rows [R*r/P, R*(r+1)/P): labels and row offsets read with MPI-IO, its
// index and value sections (nearly all the bytes) mapped read-only where the file can be
// mapped, read with MPI-IO where not. Each rank checks every block its bytes lie in,
// reading the rest of the blocks at the ends of its ranges, so together the ranks check
// every byte; it also checks what a CRC cannot (a file written by something else): row
// offsets ascending within nnz, labels and values finite, indices below dim.
#include <cstdint>
#include <string>

#include <mpi.h>

#include "data/cache_header.h"
#include "data/dataset.h"

namespace mpisgd {

// Collective: true if `path` starts like a cache, intact or damaged (starts_like_cache on
// its header, read by rank 0 and broadcast); anything else is read as LIBSVM text.
bool is_binary_cache(const std::string& path, MPI_Comm comm);

// Collective: each rank holds its rows of one file (as read_libsvm_text leaves them);
// writes `path` through a temporary name, renamed once complete.
void write_binary_cache(const Dataset& local, const std::string& path, MPI_Comm comm);

enum class CacheRead { map_or_read, read };

// Collective: this rank's rows of the cache. Throws JobFailed on every rank, naming the
// file and the cause (and the row or block), on a bad magic, version, size, checksum or
// value.
Dataset read_binary_cache(const std::string& path, MPI_Comm comm, CacheRead how = CacheRead::map_or_read);

}  // namespace mpisgd
