#include "data/binary_cache.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstddef>
#include <cstring>
#include <functional>
#include <new>
#include <optional>
#include <stdexcept>
#include <type_traits>
#include <vector>

#include <spdlog/spdlog.h>

#include "comm/job_error.h"
#include "comm/prefix_sum.h"
#include "data/crc32c.h"
#include "data/file_mapping.h"
#include "data/mpi_file.h"

namespace mpisgd {
namespace {

constexpr uint32_t kBlockBytes = uint32_t{1} << 20;
// Bytes hashed and then inspected at a time, so the inspection finds them in L2.
constexpr uint64_t kChunkBytes = uint64_t{64} << 10;
// Bytes per MPI-IO read where the entries cannot be mapped.
constexpr uint64_t kReadBytes = uint64_t{512} << 10;

// Damage found at file offset `at`, the ordering key among ranks' failures; what() is
// the cause alone, the file is named where it is caught.
struct Damaged : std::runtime_error {
  Damaged(MPI_Offset at, const std::string& cause) : std::runtime_error(cause), at(at) {}
  MPI_Offset at;
};

std::string row_name(uint64_t global_row) { return "row " + std::to_string(global_row + 1); }

// The header, checked on its own and against the file's size without trusting its sizes.
std::pair<CacheHeader, CacheLayout> read_header(MpiFile& file) {
  const auto size = file.size();
  CacheHeader h{};
  if (size >= static_cast<MPI_Offset>(sizeof h)) file.read_exact(0, &h, sizeof h);
  try {
    return {h, check_cache_header(h, static_cast<uint64_t>(size))};
  } catch (const CacheHeaderError& e) {
    throw Damaged(static_cast<MPI_Offset>(e.at), e.what());
  }
}

std::vector<uint32_t> read_table(MpiFile& file, const CacheLayout& at, uint32_t table_crc) {
  std::vector<uint32_t> table(at.blocks);
  file.read_exact(at.table, table.data(), table.size() * sizeof(uint32_t));
  if (crc32c(0, table.data(), table.size() * sizeof(uint32_t)) != table_crc)
    throw Damaged(at.table, "checksum mismatch in the table of block checksums");
  return table;
}

// Checks the blocks that hold a rank's bytes, given in increasing file order. A block's
// bytes the rank does not hold (at the ends of its ranges) are read from the file.
// Each piece is inspected once hashed; damage an inspection finds is reported once its
// block's checksum matched, so damaged bytes are named a checksum mismatch and only
// bytes that were written so (by another program) fail the inspection.
class BlockChecker {
 public:
  using Inspect = std::function<void(MPI_Offset from, MPI_Offset to)>;  // bytes [from, to) of the file

  BlockChecker(MpiFile& file, const CacheLayout& at, const std::vector<uint32_t>& table)
      : file_(file), at_(at), table_(table), scratch_(std::min<uint64_t>(kChunkBytes, at.block_bytes)) {}

  // The bytes [from, from + n) of the file, held at `p`.
  void add(MPI_Offset from, const std::byte* p, uint64_t n, const Inspect& inspect) {
    if (n == 0) return;
    if (open_ && from >= at_.block_end(block_)) finish();
    if (!open_) open(at_.block_of(from));
    hash_file(from);
    while (n > 0) {
      if (!open_) open(block_ + 1);
      const uint64_t len = std::min({n, kChunkBytes, static_cast<uint64_t>(at_.block_end(block_) - pos_)});
      crc_ = crc32c(crc_, p, len);
      try {
        inspect(pos_, pos_ + static_cast<MPI_Offset>(len));
      } catch (const Damaged& e) {
        if (!pending_) pending_ = e;
      }
      pos_ += static_cast<MPI_Offset>(len);
      p += len;
      n -= len;
      if (pos_ == at_.block_end(block_)) verify();
    }
  }

  // Throws now for damage an inspection found (checking its block first), so that what
  // was inspected so far can be relied on.
  void settle() {
    if (pending_) finish();
  }

  // Checks the last block, reading the rest of it.
  void finish() {
    if (!open_) return;
    hash_file(at_.block_end(block_));
    verify();
  }

 private:
  void open(uint64_t k) {
    block_ = k;
    pos_ = at_.block_begin(k);
    crc_ = 0;
    open_ = true;
  }

  // Hashes the file's bytes from pos_ to `to`, within the open block.
  void hash_file(MPI_Offset to) {
    while (pos_ < to) {
      const auto len = std::min<uint64_t>(scratch_.size(), static_cast<uint64_t>(to - pos_));
      file_.read_exact(pos_, scratch_.data(), len);
      crc_ = crc32c(crc_, scratch_.data(), len);
      pos_ += static_cast<MPI_Offset>(len);
    }
  }

  void verify() {
    open_ = false;
    if (crc_ != table_[block_])
      throw Damaged(at_.block_begin(block_), "checksum mismatch in " + at_.describe(block_));
    if (pending_) throw *pending_;
  }

  MpiFile& file_;
  const CacheLayout& at_;
  const std::vector<uint32_t>& table_;
  std::vector<std::byte> scratch_;
  bool open_ = false;
  uint64_t block_ = 0;
  MPI_Offset pos_ = 0;  // block_ is hashed from its start to here
  uint32_t crc_ = 0;
  std::optional<Damaged> pending_;
};

const std::byte* bytes_of(const void* p) { return static_cast<const std::byte*>(p); }

// Elements of size `size` of a section starting at file offset `base` whose last byte lies
// in [from, to): an element cut by a block boundary is inspected once all of it is read.
std::pair<uint64_t, uint64_t> elements(MPI_Offset base, MPI_Offset from, MPI_Offset to, size_t size) {
  return {static_cast<uint64_t>(from - base) / size, static_cast<uint64_t>(to - base) / size};
}

// The first of v[begin, end) that is NaN or infinite, or `end`. The OR of
// (exponent bits + 1 << 23) has its sign bit set exactly when an exponent is all ones,
// which vectorises where std::isfinite does not.
uint64_t first_non_finite(const float* v, uint64_t begin, uint64_t end) {
  uint32_t any = 0;
  for (uint64_t j = begin; j < end; ++j) any |= (std::bit_cast<uint32_t>(v[j]) & 0x7F800000u) + 0x00800000u;
  if (!(any & 0x80000000u)) return end;
  while (std::isfinite(v[begin])) ++begin;
  return begin;
}

// The first of index[begin, end) at or above dim, or `end`.
uint64_t first_outside(const uint32_t* index, uint64_t begin, uint64_t end, uint32_t dim) {
  uint32_t top = 0;
  for (uint64_t j = begin; j < end; ++j) top = std::max(top, index[j]);
  if (begin == end || top < dim) return end;
  while (index[begin] < dim) ++begin;
  return begin;
}

// XORs into terms[k] the share of the n bytes written at `offset` in block k's CRC.
void add_terms(const CacheLayout& at, MPI_Offset offset, const void* data, uint64_t n,
               std::vector<uint32_t>& terms) {
  const std::byte* p = bytes_of(data);
  while (n > 0) {
    const uint64_t k = at.block_of(offset);
    const auto room = static_cast<uint64_t>(at.block_end(k) - offset);
    const uint64_t len = std::min(n, room);
    terms[k] ^= crc32c_term(p, len, room - len);
    offset += static_cast<MPI_Offset>(len);
    p += len;
    n -= len;
  }
}

// This rank's rows [r0, r1): labels and row offsets, checked; the offsets then count from
// the rank's first entry. Returns the global number of that entry.
uint64_t read_rows(MpiFile& file, BlockChecker& check, const CacheHeader& h, const CacheLayout& at, Dataset& d) {
  const uint64_t r0 = d.first_row, rows = d.rows();
  const MPI_Offset label_at = at.label + static_cast<MPI_Offset>(r0 * sizeof(float));
  const MPI_Offset ptr_at = at.row_ptr + static_cast<MPI_Offset>(r0 * sizeof(uint64_t));
  file.read_exact(label_at, d.label.data(), rows * sizeof(float));
  file.read_exact(ptr_at, d.row_ptr.data(), (rows + 1) * sizeof(uint64_t));

  const BlockChecker::Inspect labels = [&](MPI_Offset from, MPI_Offset to) {
    const auto [begin, end] = elements(label_at, from, to, sizeof(float));
    const uint64_t j = first_non_finite(d.label.data(), begin, end);
    if (j != end)
      throw Damaged(label_at + static_cast<MPI_Offset>(j * sizeof(float)),
                    row_name(r0 + j) + ": label is NaN or infinite");
  };
  const BlockChecker::Inspect offsets = [&](MPI_Offset from, MPI_Offset to) {
    const auto [begin, end] = elements(ptr_at, from, to, sizeof(uint64_t));
    const auto name = [&](uint64_t j) {
      return "row_ptr[" + std::to_string(r0 + j) + "] = " + std::to_string(d.row_ptr[j]);
    };
    for (uint64_t j = begin; j < end; ++j) {
      const uint64_t v = d.row_ptr[j];
      std::string cause;
      if (v > h.nnz)
        cause = name(j) + " is beyond the header's " + std::to_string(h.nnz) + " entries";
      else if (j > 0 && v < d.row_ptr[j - 1])
        cause = row_name(r0 + j - 1) + " ends before it starts (" + name(j - 1) + ", " + name(j) + ")";
      else if (r0 + j == 0 && v != 0)
        cause = name(j) + ", not 0";
      else if (r0 + j == h.rows && v != h.nnz)
        cause = name(j) + ", not the header's " + std::to_string(h.nnz) + " entries";
      if (!cause.empty()) throw Damaged(ptr_at + static_cast<MPI_Offset>(j * sizeof(uint64_t)), cause);
    }
  };
  check.add(label_at, bytes_of(d.label.data()), rows * sizeof(float), labels);
  check.add(ptr_at, bytes_of(d.row_ptr.data()), (rows + 1) * sizeof(uint64_t), offsets);
  check.settle();  // the offsets place the entries: rely on them only once checked
  const uint64_t base = d.row_ptr[0];
  for (auto& p : d.row_ptr) p -= base;
  return base;
}

// This rank's entries, mapped or read, and checked: indices below dim, values finite.
void read_entries(MpiFile& file, BlockChecker& check, const CacheLayout& at, uint64_t base, CacheRead how,
                  Dataset& d) {
  const uint64_t nnz = d.row_ptr.back();
  const MPI_Offset index_at = at.index + static_cast<MPI_Offset>(base * sizeof(uint32_t));
  const MPI_Offset value_at = at.value + static_cast<MPI_Offset>(base * sizeof(float));
  const auto row_of = [&](uint64_t entry) {
    const auto after = std::upper_bound(d.row_ptr.begin(), d.row_ptr.end(), entry);
    return d.first_row + static_cast<uint64_t>(after - d.row_ptr.begin() - 1);
  };
  const BlockChecker::Inspect indices = [&](MPI_Offset from, MPI_Offset to) {
    const auto [begin, end] = elements(index_at, from, to, sizeof(uint32_t));
    const uint64_t j = first_outside(d.index.data(), begin, end, d.dim);
    if (j != end)
      throw Damaged(index_at + static_cast<MPI_Offset>(j * sizeof(uint32_t)),
                    row_name(row_of(j)) + ": feature index " + std::to_string(d.index[j]) +
                        " (0-based) not below the header's dim " + std::to_string(d.dim));
  };
  const BlockChecker::Inspect values = [&](MPI_Offset from, MPI_Offset to) {
    const auto [begin, end] = elements(value_at, from, to, sizeof(float));
    const uint64_t j = first_non_finite(d.value.data(), begin, end);
    if (j != end)
      throw Damaged(value_at + static_cast<MPI_Offset>(j * sizeof(float)),
                    row_name(row_of(j)) + ": value is NaN or infinite");
  };

  std::string why = "MPI-IO reads asked for";
  auto index_map =
      how == CacheRead::map_or_read ? FileMapping::map(file.path(), index_at, nnz * 4, why) : nullptr;
  auto value_map = index_map ? FileMapping::map(file.path(), value_at, nnz * 4, why) : nullptr;
  if (index_map && value_map) {
    d.index = CsrArray<uint32_t>(index_map, reinterpret_cast<const uint32_t*>(index_map->data()), nnz);
    d.value = CsrArray<float>(value_map, reinterpret_cast<const float*>(value_map->data()), nnz);
    check.add(index_at, index_map->data(), nnz * 4, indices);
    check.add(value_at, value_map->data(), nnz * 4, values);
    return;
  }
  spdlog::debug("{}: entries read with MPI-IO, not mapped ({})", file.path(), why);
  const auto read = [&](MPI_Offset at, auto& a, const BlockChecker::Inspect& inspect) {
    using T = std::remove_reference_t<decltype(a[0])>;
    a.resize(nnz);
    for (uint64_t from = 0; from < nnz; from += kReadBytes / sizeof(T)) {
      const uint64_t count = std::min(kReadBytes / sizeof(T), nnz - from);
      const MPI_Offset offset = at + static_cast<MPI_Offset>(from * sizeof(T));
      map_pages(a, from, count);
      file.read_exact(offset, a.data() + from, count * sizeof(T));
      check.add(offset, bytes_of(a.data() + from), count * sizeof(T), inspect);
    }
  };
  read(index_at, d.index.owned(), indices);
  read(value_at, d.value.owned(), values);
}

}  // namespace

bool is_binary_cache(const std::string& path, MPI_Comm comm) {
  MpiFile file = MpiFile::open_read(path, comm);
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  int yes = 0;
  if (rank == 0) {
    char head[sizeof(CacheHeader)] = {};
    yes = starts_like_cache(head, file.read_at(0, head, sizeof head));
  }
  MPI_Bcast(&yes, 1, MPI_INT, 0, comm);
  return yes != 0;
}

void write_binary_cache(const Dataset& d, const std::string& path, MPI_Comm comm) {
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  const uint64_t rows = d.global_rows;
  const RankSums entries = sums_across_ranks(comm, d.nnz());
  const uint64_t nnz = entries.total, nnz_before = entries.below;

  // This rank's pieces of the file; rank 0 also writes the opening row offset 0.
  const CacheLayout at(rows, nnz, kBlockBytes);
  const auto row0 = static_cast<MPI_Offset>(d.first_row);
  std::vector<uint64_t> ptr(d.row_ptr.begin() + (rank == 0 ? 0 : 1), d.row_ptr.end());
  for (auto& p : ptr) p += nnz_before;
  const auto entry0 = static_cast<MPI_Offset>(nnz_before);
  const struct {
    MPI_Offset at;
    const void* data;
    uint64_t bytes;
  } pieces[] = {
      {at.label + row0 * 4, d.label.data(), d.rows() * sizeof(float)},
      {at.row_ptr + (rank == 0 ? 0 : (row0 + 1) * 8), ptr.data(), ptr.size() * sizeof(uint64_t)},
      {at.index + entry0 * 4, d.index.data(), d.nnz() * sizeof(uint32_t)},
      {at.value + entry0 * 4, d.value.data(), d.nnz() * sizeof(float)},
  };

  // Every byte of a block is written by exactly one rank: XOR of the ranks' terms.
  std::vector<uint32_t> terms(at.blocks), table(rank == 0 ? at.blocks : 0);
  for (const auto& piece : pieces) add_terms(at, piece.at, piece.data, piece.bytes, terms);
  MPI_Reduce(terms.data(), table.data(), static_cast<int>(at.blocks), MPI_UINT32_T, MPI_BXOR, 0, comm);
  CacheHeader h{};
  if (rank == 0) {
    const uint32_t full = crc32c_zeros(kBlockBytes);
    for (uint64_t k = 0; k < at.blocks; ++k)
      table[k] ^=
          k + 1 < at.blocks ? full : crc32c_zeros(static_cast<uint64_t>(at.block_end(k) - at.block_begin(k)));
    std::memcpy(h.magic, kCacheMagic, sizeof h.magic);
    h.version = kCacheVersion;
    h.dim = d.dim;
    h.rows = rows;
    h.nnz = nnz;
    h.block_bytes = kBlockBytes;
    h.table_crc = crc32c(0, table.data(), table.size() * sizeof(uint32_t));
    h.header_crc = cache_header_crc(h);
  }

  write_file_atomically(path, comm, [&](MpiFile& file) {
    if (rank == 0) {
      file.write_at(0, &h, sizeof h);
      file.write_at(at.table, table.data(), table.size() * sizeof(uint32_t));
    }
    for (const auto& piece : pieces) file.write_at(piece.at, piece.data, piece.bytes);
  });
}

Dataset read_binary_cache(const std::string& path, MPI_Comm comm, CacheRead how) {
  int rank = 0, size = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  MpiFile file = MpiFile::open_read(path, comm);
  Dataset d;
  d.path = path;
  std::optional<LocalFailure> failure;
  try {
    const auto [h, at] = read_header(file);
    const std::vector<uint32_t> table = read_table(file, at, h.table_crc);
    const uint64_t r0 = h.rows / size * rank + h.rows % size * rank / size;
    const uint64_t r1 = h.rows / size * (rank + 1) + h.rows % size * (rank + 1) / size;
    d.dim = h.dim;
    d.global_rows = h.rows;
    d.first_row = r0;
    d.label.resize(r1 - r0);
    d.row_ptr.resize(r1 - r0 + 1);
    BlockChecker check(file, at, table);
    const uint64_t base = read_rows(file, check, h, at, d);
    read_entries(file, check, at, base, how, d);
    check.finish();
  } catch (const Damaged& e) {
    failure = LocalFailure{static_cast<uint64_t>(e.at),
                           path + ": damaged mpisgd binary cache (convert the text file again): " + e.what()};
  } catch (const std::bad_alloc&) {
    failure = LocalFailure{0, path + ": out of memory reading the binary cache"};
  } catch (const std::exception& e) {
    const std::string what = e.what();
    failure = LocalFailure{0, what.starts_with(path) ? what : path + ": " + what};
  }
  agree_on_error(comm, failure);
  return d;
}

}  // namespace mpisgd
