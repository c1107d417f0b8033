#pragma once
// Binary cache of a LIBSVM file, read back much faster than text.
// Layout (host byte order, checked by the magic):
//   CacheHeader (64 B) | label f32[R] | row_ptr u64[R+1] | index u32[nnz] | value f32[nnz]
// Rank r holds rows [R*r/P, R*(r+1)/P): labels and row offsets read with MPI-IO, its
// index and value sections (nearly all the bytes) mapped read-only where the file can be
// mapped, read with MPI-IO where not. The checksum is the sum over rows of a hash of
// (global row, label, entries), so each rank checks its part and one allreduce checks
// the whole file.
#include <cstdint>
#include <string>

#include <mpi.h>

#include "data/dataset.h"

namespace mpisgd {

struct CacheHeader {
  char magic[8];
  uint32_t version;
  uint32_t dim;
  uint64_t rows;
  uint64_t nnz;
  uint64_t checksum;
  uint64_t header_hash;  // of the bytes above, so a damaged header is named as such
  char reserved[16];
};
static_assert(sizeof(CacheHeader) == 64);

inline constexpr char kCacheMagic[8] = {'M', 'P', 'I', 'S', 'G', 'D', 'C', '\n'};
inline constexpr uint32_t kCacheVersion = 2;  // 2: row hash by sum of products

// Collective: true if `path` starts with the cache magic (read by rank 0, broadcast).
bool is_binary_cache(const std::string& path, MPI_Comm comm);

// Collective: each rank holds its rows of one file (as read_libsvm_text leaves them);
// writes `path` through a temporary name, renamed once complete.
void write_binary_cache(const Dataset& local, const std::string& path, MPI_Comm comm);

enum class CacheRead { map_or_read, read };

// Collective: this rank's rows of the cache. Throws JobFailed on every rank on a bad
// magic, version, size or checksum.
Dataset read_binary_cache(const std::string& path, MPI_Comm comm, CacheRead how = CacheRead::map_or_read);

// Order-independent row hash summed into CacheHeader::checksum.
uint64_t row_hash(uint64_t global_row, float label, const uint32_t* index, const float* value, uint64_t n);

}  // namespace mpisgd
