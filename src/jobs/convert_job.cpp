#include "jobs/convert_job.h"

#include <spdlog/spdlog.h>

#include "comm/output_paths.h"
#include "data/binary_cache.h"
#include "data/csr_memory.h"
#include "data/mpiio_text_reader.h"

namespace mpisgd {

void run_convert(const ConvertConfig& c, MPI_Comm comm) {
  check_output_paths(comm, {{"--out", c.out}});
  const double start = MPI_Wtime();
  const auto max_memory = parse_max_memory(c.max_memory);
  TextReadResult text = read_libsvm_text(c.data, comm, TextReadOptions{{c.zero_based, c.dim}, size_t{1} << 20, max_memory});
  const double parsed = MPI_Wtime();
  write_binary_cache(text.data, c.out, comm);
  spdlog::info("{} -> {}: {} rows, N = {}; parsed in {:.2f} s, written in {:.2f} s", c.data, c.out,
               text.data.global_rows, text.data.dim, parsed - start, MPI_Wtime() - parsed);
}

}  // namespace mpisgd
