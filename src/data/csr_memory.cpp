#include "data/csr_memory.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstring>
#include <iterator>
#include <stdexcept>
#include <string_view>
#include <vector>

#include "comm/job_error.h"
#include "comm/node_facts.h"

namespace mpisgd {
namespace {

// Bytes per sample: a few lines of any real file, and 16 of them are 1 MiB of reads.
constexpr int64_t kSampleBytes = int64_t{64} << 10;
// A row costs its label (f32) and its offset (u64); an entry its index (u32) and value.
constexpr uint64_t kRowBytes = sizeof(float) + sizeof(uint64_t);
constexpr uint64_t kEntryBytes = sizeof(uint32_t) + sizeof(float);

std::string human(uint64_t bytes) {
  constexpr const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  auto v = static_cast<double>(bytes);
  size_t u = 0;
  for (; v >= 1024 && u + 1 < std::size(units); ++u) v /= 1024;
  return fmt::format("{:.{}f} {}", v, u == 0 ? 0 : 1, units[u]);
}

}  // namespace

std::optional<uint64_t> parse_max_memory(const std::string& text) {
  if (text == "auto") return std::nullopt;
  const auto bad = [&](const std::string& why) {
    return JobFailed("--max-memory " + (text.empty() ? std::string("''") : text) + ": " + why +
                     " (bytes with an optional K, M, G or T suffix, e.g. 512M or 8G; auto for this rank's share of "
                     "its node's memory; 0 for no check)");
  };
  double number = 0;
  const char* end = text.data() + text.size();
  const auto [next, ec] = std::from_chars(text.data(), end, number);
  if (ec != std::errc() || text.empty() || text[0] == '-' || !std::isfinite(number)) throw bad("not a size");
  std::string suffix(next, end);
  std::transform(suffix.begin(), suffix.end(), suffix.begin(), [](unsigned char c) { return std::toupper(c); });
  int shift = 0;
  if (const auto unit = suffix.empty() ? std::string::npos : std::string_view("KMGT").find(suffix[0]);
      unit != std::string::npos) {
    shift = 10 * (static_cast<int>(unit) + 1);
    suffix.erase(0, 1);
    if (suffix == "IB") suffix = "B";
  }
  if (!suffix.empty() && suffix != "B") throw bad("unknown suffix '" + std::string(next, end) + "'");
  const double bytes = std::ldexp(number, shift);
  if (bytes >= 0x1p64) throw bad("too large");
  if (bytes != std::floor(bytes)) throw bad("not a whole number of bytes");
  return static_cast<uint64_t>(bytes);
}

CsrEstimate estimate_text_csr(MpiFile& file, int64_t begin, int64_t end) {
  CsrEstimate e;
  const int64_t range = end - begin;
  if (range <= 0) return e;
  e.sampled = range > kSamples * kSampleBytes;
  const int samples = e.sampled ? kSamples : 1;
  const int64_t piece = e.sampled ? kSampleBytes : range;
  std::vector<char> buf(static_cast<size_t>(piece));
  uint64_t newlines = 0, colons = 0, seen = 0;
  for (int s = 0; s < samples; ++s) {
    // Evenly spread: the first at the range's start, the last ending at its end.
    const int64_t at = begin + (samples == 1 ? 0 : (range - piece) / (samples - 1) * s);
    const size_t got = file.read_at(at, buf.data(), buf.size());
    newlines += static_cast<uint64_t>(std::count(buf.data(), buf.data() + got, '\n'));
    colons += static_cast<uint64_t>(std::count(buf.data(), buf.data() + got, ':'));
    seen += got;
  }
  if (seen == 0) return e;
  // A qid or a comment's colon counts as an entry: the estimate errs on the high side.
  const double scale = static_cast<double>(range) / static_cast<double>(seen);
  e.rows = static_cast<uint64_t>(std::ceil(static_cast<double>(newlines) * scale)) + 1;
  e.nnz = static_cast<uint64_t>(std::ceil(static_cast<double>(colons) * scale));
  // The reader reserves a little more than it fills, but unused capacity is never
  // touched, so it takes address space, not memory.
  e.bytes = e.rows * kRowBytes + e.nnz * kEntryBytes;
  return e;
}

uint64_t rank_memory_limit(MPI_Comm comm, std::optional<uint64_t> limit) {
  if (limit) return *limit;
  const uint64_t available = available_memory();
  return available / static_cast<uint64_t>(ranks_on_node(comm));
}

void check_csr_fits(const std::string& path, int rank, int ranks, const CsrEstimate& estimate, uint64_t range_bytes,
                    uint64_t limit_bytes, bool automatic) {
  if (limit_bytes == 0 || estimate.bytes <= limit_bytes) return;
  throw std::runtime_error(fmt::format(
      "{}: rank {} of {} would hold about {} of rows ({} rows, {} entries, projected from {} of its {} of text), "
      "above its memory limit of {} ({}): run on more ranks (or nodes), or {}",
      path, rank, ranks, human(estimate.bytes), estimate.rows, estimate.nnz,
      estimate.sampled ? fmt::format("{} samples", kSamples) : std::string("all"), human(range_bytes),
      human(limit_bytes),
      automatic ? "--max-memory auto: this node's available memory shared among its ranks" : "--max-memory",
      automatic ? "set --max-memory if more is free than the node reports (0 turns the check off)"
                : "raise --max-memory (0 turns the check off)"));
}

}  // namespace mpisgd
