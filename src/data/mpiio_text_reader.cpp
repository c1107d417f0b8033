#include "data/mpiio_text_reader.h"

#include <algorithm>
#include <cstring>
#include <limits>
#include <optional>

#include "comm/counted_comm.h"
#include "comm/extrema.h"
#include "comm/job_error.h"
#include "comm/prefix_sum.h"
#include "data/csr_memory.h"
#include "data/mpi_file.h"

namespace mpisgd {
namespace {

// First line start at or after `begin`: the byte after the first '\n' at or after begin-1.
MPI_Offset first_line_start(MpiFile& file, MPI_Offset begin) {
  if (begin == 0) return 0;
  std::vector<char> buf(64 << 10);
  for (MPI_Offset pos = begin - 1; pos < file.size();) {
    size_t got = file.read_at(pos, buf.data(), buf.size());
    auto* nl = static_cast<const char*>(std::memchr(buf.data(), '\n', got));
    if (nl) return pos + (nl - buf.data()) + 1;
    pos += static_cast<MPI_Offset>(got);
  }
  return file.size();
}

// Reserves what the whole range will need, projected from the bytes parsed so far, so
// that the CSR arrays are not regrown by doubling (a regrowth holds old and new arrays
// at once). Called after every chunk; it reserves again only when the projection
// outgrows the room, so a file whose first rows are unlike the rest costs one copy.
void reserve_for_range(Dataset& d, size_t parsed_bytes, size_t range_bytes) {
  if (parsed_bytes == 0 || range_bytes <= parsed_bytes) return;
  const double scale = 1.05 * static_cast<double>(range_bytes) / static_cast<double>(parsed_bytes);
  auto grow = [scale](auto& v, size_t extra) {
    const auto want = static_cast<size_t>(static_cast<double>(v.size()) * scale) + extra;
    if (want > v.capacity()) v.reserve(want + want / 16);  // headroom: not a copy per chunk
  };
  grow(d.index.owned(), 1024);
  grow(d.value.owned(), 1024);
  grow(d.label, 64);
  grow(d.row_ptr, 64);
}

// Maps the CSR pages the next `bytes` of text will fill (at `per_byte` entries a byte, as
// so far) in one call each, rather than a page fault per page while parsing.
void map_pages_ahead(Dataset& d, double per_byte, size_t bytes) {
  auto& index = d.index.owned();
  auto& value = d.value.owned();
  const size_t room = std::min(index.capacity() - index.size(), value.capacity() - value.size());
  const size_t count = std::min(room, static_cast<size_t>(per_byte * static_cast<double>(bytes)));
  map_pages(index, index.size(), count);
  map_pages(value, value.size(), count);
}

void parse_range(MpiFile& file, MPI_Offset start, MPI_Offset end, size_t chunk_bytes,
                 LibsvmParser& parser, Dataset& out) {
  std::vector<char> buf(chunk_bytes);
  MPI_Offset buf_offset = start;  // file offset of buf[0]
  size_t len = 0;
  while (buf_offset < end) {
    if (len == buf.size()) buf.resize(buf.size() * 2);  // a line longer than the buffer
    size_t want = std::min(buf.size() - len, static_cast<size_t>(file.size() - buf_offset) - len);
    len += file.read_at(buf_offset + static_cast<MPI_Offset>(len), buf.data() + len, want);
    bool at_eof = buf_offset + static_cast<MPI_Offset>(len) >= file.size();
    size_t owned = static_cast<size_t>(std::min<MPI_Offset>(end - buf_offset, static_cast<MPI_Offset>(len)));
    if (buf_offset > start) map_pages_ahead(out, static_cast<double>(out.nnz()) / static_cast<double>(buf_offset - start), owned);
    const char* stop = parser.parse(buf.data(), buf.data() + len, buf.data() + owned, at_eof, out);
    size_t consumed = static_cast<size_t>(stop - buf.data());
    buf_offset += static_cast<MPI_Offset>(consumed);
    reserve_for_range(out, static_cast<size_t>(buf_offset - start), static_cast<size_t>(end - start));
    if (at_eof && consumed == len) break;
    std::memmove(buf.data(), buf.data() + consumed, len - consumed);
    len -= consumed;
  }
}

}  // namespace

void check_dim_flag(uint64_t dim) {
  constexpr uint64_t most = UINT32_MAX;
  if (dim > most)
    throw JobFailed("--dim " + std::to_string(dim) + " is too large: indices are 32-bit, so at most " +
                    std::to_string(most) + " features");
}

TextReadResult read_libsvm_text(const std::string& path, MPI_Comm comm,
                                const TextReadOptions& options) {
  check_dim_flag(options.parse.dim_limit);
  int rank = 0, size = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);

  MpiFile file = MpiFile::open_read(path, comm);
  TextReadResult result;
  Dataset& data = result.data;
  data.path = path;
  LibsvmParser parser(options.parse);
  const uint64_t memory_limit = rank_memory_limit(comm, options.max_memory);
  std::optional<LocalFailure> io_failure;
  std::optional<ParseError> parse_error;
  try {
    auto share = [&](MPI_Offset r) {  // S*r/P without overflowing S*r
      return file.size() / size * r + file.size() % size * r / size;
    };
    MPI_Offset end = share(rank + 1);
    MPI_Offset start = first_line_start(file, share(rank));
    if (start < end && memory_limit)
      check_csr_fits(path, rank, size, estimate_text_csr(file, start, end), static_cast<uint64_t>(end - start),
                     memory_limit, !options.max_memory);
    if (start < end) parse_range(file, start, end, options.chunk_bytes, parser, data);
  } catch (const ParseError& e) {
    parse_error = e;
  } catch (const std::exception& e) {
    io_failure = LocalFailure{0, e.what()};
  }

  // Lines before this rank's range are the lines the lower ranks parsed; a rank that
  // failed stopped early, but only the lowest failing rank's line number is reported.
  const uint64_t line_offset = sum_below_rank(comm, parser.lines());
  if (parse_error) {
    uint64_t line = line_offset + parse_error->line;
    io_failure = LocalFailure{line, InputError(path, line, parse_error->cause).what()};
  }
  agree_on_error(comm, io_failure);

  for (auto seen : parser.first_labels())
    result.first_labels.push_back({seen.label, seen.line + line_offset});

  const RankSums rows = sums_across_ranks(comm, data.rows());
  data.first_row = rows.below;
  data.global_rows = rows.total;
  if (rows.total == 0) throw JobFailed(InputError(path, 0, "no rows").what());

  const int64_t local_dim = data.nnz() ? int64_t{parser.max_index()} + 1 : 0;
  const int64_t dim = max_over_ranks(comm, local_dim);
  data.dim = static_cast<uint32_t>(options.parse.dim_limit ? options.parse.dim_limit : dim);
  const int64_t dim_line = min_over_ranks(
      comm, local_dim == dim && dim > 0 ? static_cast<int64_t>(line_offset + parser.max_index_line())
                                        : std::numeric_limits<int64_t>::max());
  if (!options.parse.dim_limit && dim > 0) result.dim_line = static_cast<uint64_t>(dim_line);
  return result;
}

}  // namespace mpisgd
