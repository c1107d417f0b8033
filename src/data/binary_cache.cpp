#include "data/binary_cache.h"

#include <bit>
#include <cstring>
#include <optional>
#include <stdexcept>

#include <spdlog/spdlog.h>

#include "comm/job_error.h"
#include "data/file_mapping.h"
#include "data/mpi_file.h"

namespace mpisgd {
namespace {

inline uint64_t mix(uint64_t h, uint64_t x) {
  h = (h ^ x) * 0x9E3779B97F4A7C15ull;
  return h ^ (h >> 29);
}

uint64_t header_hash(const CacheHeader& h) {
  uint64_t acc = 0;
  const auto* bytes = reinterpret_cast<const unsigned char*>(&h);
  for (size_t i = 0; i < offsetof(CacheHeader, header_hash); i += 8) {
    uint64_t word;
    std::memcpy(&word, bytes + i, 8);
    acc = mix(acc, word);
  }
  return acc;
}

struct Sections {
  MPI_Offset label, row_ptr, index, value, end;
  explicit Sections(uint64_t rows, uint64_t nnz) {
    label = sizeof(CacheHeader);
    row_ptr = label + static_cast<MPI_Offset>(rows * sizeof(float));
    index = row_ptr + static_cast<MPI_Offset>((rows + 1) * sizeof(uint64_t));
    value = index + static_cast<MPI_Offset>(nnz * sizeof(uint32_t));
    end = value + static_cast<MPI_Offset>(nnz * sizeof(float));
  }
};

// Sum of the hashes of local rows [r0, r1).
uint64_t local_checksum(const Dataset& d, uint64_t r0, uint64_t r1) {
  uint64_t sum = 0;
  for (uint64_t r = r0; r < r1; ++r)
    sum += row_hash(d.first_row + r, d.label[r], d.index.data() + d.row_ptr[r],
                    d.value.data() + d.row_ptr[r], d.row_ptr[r + 1] - d.row_ptr[r]);
  return sum;
}

// Rows are read in blocks of about this many entries (512 KiB of indices and values),
// each hashed while it is still in cache.
constexpr uint64_t kBlockEntries = uint64_t{1} << 16;

uint64_t sum_over_ranks(uint64_t v, MPI_Comm comm) {
  uint64_t total = 0;
  MPI_Allreduce(&v, &total, 1, MPI_UINT64_T, MPI_SUM, comm);
  return total;
}

}  // namespace

uint64_t row_hash(uint64_t global_row, float label, const uint32_t* index, const float* value, uint64_t n) {
  // A sum of 32x32-bit products (NH-style): no chain between entries, so it vectorises
  // and hashes a row faster than it is read. The position enters each product, so
  // swapped entries change it too; the row number and label are mixed in at the end.
  uint64_t sum = 0;
  for (uint64_t j = 0; j < n; ++j)
    sum += static_cast<uint64_t>(index[j] + static_cast<uint32_t>(j) * 0x9E3779B9u) *
           static_cast<uint64_t>(std::bit_cast<uint32_t>(value[j]) ^ 0x85EBCA6Bu);
  uint64_t h = mix(0x243F6A8885A308D3ull, global_row);
  h = mix(h, std::bit_cast<uint32_t>(label));
  h = mix(h, n);
  return mix(h, sum);
}

bool is_binary_cache(const std::string& path, MPI_Comm comm) {
  MpiFile file = MpiFile::open_read(path, comm);
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  int yes = 0;
  if (rank == 0) {
    char magic[sizeof(kCacheMagic)] = {};
    yes = file.read_at(0, magic, sizeof magic) == sizeof magic &&
          std::memcmp(magic, kCacheMagic, sizeof magic) == 0;
  }
  MPI_Bcast(&yes, 1, MPI_INT, 0, comm);
  return yes != 0;
}

void write_binary_cache(const Dataset& d, const std::string& path, MPI_Comm comm) {
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  uint64_t rows = d.global_rows;
  uint64_t nnz = sum_over_ranks(d.nnz(), comm);
  uint64_t checksum = sum_over_ranks(local_checksum(d, 0, d.rows()), comm);
  uint64_t nnz_before = 0, local_nnz = d.nnz();
  MPI_Exscan(&local_nnz, &nnz_before, 1, MPI_UINT64_T, MPI_SUM, comm);
  if (rank == 0) nnz_before = 0;

  Sections at(rows, nnz);
  write_file_atomically(path, comm, [&](MpiFile& file) {
    if (rank == 0) {
      CacheHeader h{};
      std::memcpy(h.magic, kCacheMagic, sizeof h.magic);
      h.version = kCacheVersion;
      h.dim = d.dim;
      h.rows = rows;
      h.nnz = nnz;
      h.checksum = checksum;
      h.header_hash = header_hash(h);
      file.write_at(0, &h, sizeof h);
    }
    auto row0 = static_cast<MPI_Offset>(d.first_row);
    file.write_at(at.label + row0 * 4, d.label.data(), d.rows() * sizeof(float));
    // Global offsets; rank 0 also writes the opening 0.
    std::vector<uint64_t> ptr(d.row_ptr.begin() + 1, d.row_ptr.end());
    for (auto& p : ptr) p += nnz_before;
    if (rank == 0) file.write_at(at.row_ptr, &d.row_ptr[0], sizeof(uint64_t));
    file.write_at(at.row_ptr + (row0 + 1) * 8, ptr.data(), ptr.size() * sizeof(uint64_t));
    auto off = static_cast<MPI_Offset>(nnz_before);
    file.write_at(at.index + off * 4, d.index.data(), d.nnz() * sizeof(uint32_t));
    file.write_at(at.value + off * 4, d.value.data(), d.nnz() * sizeof(float));
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
  CacheHeader h{};
  uint64_t checksum = 0;
  try {
    file.read_exact(0, &h, sizeof h);
    if (std::memcmp(h.magic, kCacheMagic, sizeof h.magic) != 0) throw std::runtime_error(path + ": not an mpisgd binary cache");
    if (h.header_hash != header_hash(h)) throw std::runtime_error(path + ": damaged cache header");
    if (h.version != kCacheVersion)
      throw std::runtime_error(path + ": cache version " + std::to_string(h.version) + ", this build reads " +
                               std::to_string(kCacheVersion) + "; convert the text file again");
    Sections at(h.rows, h.nnz);
    if (file.size() != at.end)
      throw std::runtime_error(path + ": size " + std::to_string(file.size()) + " bytes, header says " +
                               std::to_string(at.end) + " (truncated or damaged)");
    uint64_t r0 = h.rows / size * rank + h.rows % size * rank / size;
    uint64_t r1 = h.rows / size * (rank + 1) + h.rows % size * (rank + 1) / size;
    d.dim = h.dim;
    d.global_rows = h.rows;
    d.first_row = r0;
    d.label.resize(r1 - r0);
    d.row_ptr.resize(r1 - r0 + 1);
    file.read_exact(at.label + static_cast<MPI_Offset>(r0 * 4), d.label.data(), d.label.size() * 4);
    file.read_exact(at.row_ptr + static_cast<MPI_Offset>(r0 * 8), d.row_ptr.data(), d.row_ptr.size() * 8);
    uint64_t base = d.row_ptr[0], end = d.row_ptr.back();
    if (end < base || end > h.nnz) throw std::runtime_error(path + ": damaged row offsets");
    for (size_t r = 0; r + 1 < d.row_ptr.size(); ++r)
      if (d.row_ptr[r] > d.row_ptr[r + 1]) throw std::runtime_error(path + ": damaged row offsets");
    for (auto& p : d.row_ptr) p -= base;
    const uint64_t nnz = end - base;
    const auto index_at = at.index + static_cast<MPI_Offset>(base * 4);
    const auto value_at = at.value + static_cast<MPI_Offset>(base * 4);
    std::string why = "MPI-IO reads asked for";
    auto index_map = how == CacheRead::map_or_read ? FileMapping::map(path, index_at, nnz * 4, why) : nullptr;
    auto value_map = index_map ? FileMapping::map(path, value_at, nnz * 4, why) : nullptr;
    if (index_map && value_map) {
      d.index = CsrArray<uint32_t>(index_map, reinterpret_cast<const uint32_t*>(index_map->data()), nnz);
      d.value = CsrArray<float>(value_map, reinterpret_cast<const float*>(value_map->data()), nnz);
      checksum = local_checksum(d, 0, d.rows());
    } else {
      spdlog::debug("{}: entries read with MPI-IO, not mapped ({})", path, why);
      auto& index = d.index.owned();
      auto& value = d.value.owned();
      index.resize(nnz);
      value.resize(nnz);
      for (uint64_t r = 0; r < d.rows();) {
        uint64_t next = r + 1;
        while (next < d.rows() && d.row_ptr[next] - d.row_ptr[r] < kBlockEntries) ++next;
        const uint64_t from = d.row_ptr[r], count = d.row_ptr[next] - from;
        map_pages(index, from, count);
        map_pages(value, from, count);
        file.read_exact(index_at + static_cast<MPI_Offset>(from * 4), index.data() + from, count * 4);
        file.read_exact(value_at + static_cast<MPI_Offset>(from * 4), value.data() + from, count * 4);
        checksum += local_checksum(d, r, next);
        r = next;
      }
    }
  } catch (const std::exception& e) {
    failure = LocalFailure{0, e.what()};
  }
  agree_on_error(comm, failure);
  if (sum_over_ranks(checksum, comm) != h.checksum)
    throw JobFailed(path + ": checksum mismatch (damaged cache; convert the text file again)");
  return d;
}

}  // namespace mpisgd
