#pragma once
// The memory a rank's rows will take, checked before the reader allocates them, so that
// a file too large for its ranks fails at once with a message saying what to do instead
// of the OOM killer ending a rank mid-read (which the other ranks see as a hang or an
// MPI abort naming nothing).
#include <cstdint>
#include <optional>
#include <string>

#include <mpi.h>

#include "data/mpi_file.h"

namespace mpisgd {

// --max-memory: bytes with an optional K, M, G or T suffix (powers of 1024; "KiB", "KB"
// and "K" alike, decimals allowed: 1.5G), or "auto" (nullopt: the rank's share of its
// node's available memory, see comm/node_facts.h), or 0 for no check. Throws JobFailed.
std::optional<uint64_t> parse_max_memory(const std::string& text);

// The CSR (labels, row offsets, indices, values) that text bytes [begin, end) of `file`
// parse into, projected from the newlines (rows) and colons (entries) counted in
// kSamples pieces spread over the range (all of it when it is small), with the reader's
// reserve headroom (mpiio_text_reader.cpp) on top.
struct CsrEstimate {
  uint64_t rows = 0, nnz = 0, bytes = 0;
  bool sampled = false;  // false: counted over the whole range
};
inline constexpr int kSamples = 16;
CsrEstimate estimate_text_csr(MpiFile& file, int64_t begin, int64_t end);

// Collective over `comm`: the bytes each rank may allocate for its rows under `limit`
// (--max-memory): the flag's value, or for auto this node's available memory shared
// among its ranks of `comm`; 0 for no check (the flag's 0, or memory unknown).
uint64_t rank_memory_limit(MPI_Comm comm, std::optional<uint64_t> limit);

// Throws std::runtime_error, naming the file, the rank, the estimate, the limit and what
// to do, when `estimate` is above `limit_bytes` (not 0).
void check_csr_fits(const std::string& path, int rank, int ranks, const CsrEstimate& estimate, uint64_t range_bytes,
                    uint64_t limit_bytes, bool automatic);

}  // namespace mpisgd
