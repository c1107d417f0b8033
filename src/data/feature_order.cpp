#include "data/feature_order.h"

#include <algorithm>
#include <bit>
#include <numeric>
#include <utility>

namespace mpisgd {
namespace {

// Entries ahead whose line of a per-feature table (counts, the map) is fetched: random
// reads of a table that outgrows the cache, as the weights are in training.
constexpr size_t kAhead = 64;

// One stable counting pass of an LSD radix sort: `from` reordered by 16 bits of key().
template <class Key>
void radix_pass(const std::vector<uint32_t>& from, std::vector<uint32_t>& to, int shift, Key key) {
  std::vector<uint64_t> start(size_t{1} << 16, 0);
  for (uint32_t f : from) ++start[(key(f) >> shift) & 0xFFFF];
  uint64_t sum = 0;
  for (uint64_t& s : start) sum += std::exchange(s, sum);
  for (uint32_t f : from) to[start[(key(f) >> shift) & 0xFFFF]++] = f;
}

// A row's entries as (index << 32 | value bits); indices are distinct within a row.
uint64_t entry(uint32_t index, float value) { return uint64_t{index} << 32 | std::bit_cast<uint32_t>(value); }

// One stable LSD radix pass over a row: `row` reordered into `spare` by the `width` bits
// of the index from bit `low` up, then swapped back into `row`.
template <int width>
void row_radix_pass(std::vector<uint64_t>& row, std::vector<uint64_t>& spare, int low) {
  constexpr uint64_t mask = (uint64_t{1} << width) - 1;
  const int shift = 32 + low;
  uint32_t start[size_t{1} << width] = {};
  for (uint64_t e : row) ++start[(e >> shift) & mask];
  uint32_t sum = 0;
  for (uint32_t& s : start) sum += std::exchange(s, sum);
  for (uint64_t e : row) spare[start[(e >> shift) & mask]++] = e;
  row.swap(spare);
}

// Sorts a row's entries by index; `high` has every bit that is set in some index.
// Rows of 16 to 1,023 entries: LSD radix passes on the top bits, 8 a pass, leave each
// entry among the few of its bucket, and an insertion sort finishes with few moves (one
// pass below 256 entries; URL-like rows, ~115 entries, were renumbered in a third of the
// time std::sort took). Longer rows are sorted by LSD passes of 12 bits over every bit
// (2 for Webspam's 16.6M features): renumbered by popularity, their head features crowd
// the low end of each stripe, which left buckets 256 indices wide with dozens of
// entries for the insertion sort: the 16k + 4k Webspam-like rows of the time-to-accuracy
// files were renumbered in 1.32 s against 1.65 s (medians of 3, interleaved).
void sort_row(std::vector<uint64_t>& row, std::vector<uint64_t>& spare, uint32_t high) {
  constexpr size_t kLongRow = 1024;
  constexpr int kWideDigit = 12;
  const int bits = std::bit_width(high);
  spare.resize(row.size());
  if (row.size() >= kLongRow) {
    for (int low = 0; low < bits; low += kWideDigit) row_radix_pass<kWideDigit>(row, spare, low);
    return;
  }
  const int digits = row.size() < 16 ? 0 : row.size() < 256 ? 1 : std::max(2, (bits - 1) / 8);
  for (int d = digits; d >= 1; --d) row_radix_pass<8>(row, spare, std::max(0, bits - 8 * d));
  for (size_t j = 1; j < row.size(); ++j) {
    const uint64_t e = row[j];
    size_t k = j;
    for (; k > 0 && row[k - 1] > e; --k) row[k] = row[k - 1];
    row[k] = e;
  }
}

// Popularity rank r (0: the most frequent feature) to its model index. Stripe b is
// [dim b / B, dim (b + 1) / B), as owned_range splits an index range, so its size is q or
// q + 1. Ranks are dealt in rounds: in rounds 0..q-1 every stripe takes one, in the last
// round only the stripes of size q + 1, in order.
class Dealer {
 public:
  Dealer(uint32_t dim, uint32_t stripes)
      : stripes_(std::max<uint32_t>(1, stripes)), q_(dim / stripes_), full_rounds_(uint64_t{q_} * stripes_) {
    for (uint32_t b = 0; b <= stripes_; ++b) begin_.push_back(static_cast<uint32_t>(uint64_t{dim} * b / stripes_));
    for (uint32_t b = 0; b < stripes_; ++b)
      if (begin_[b + 1] - begin_[b] > q_) longer_.push_back(b);
  }
  uint32_t operator()(uint32_t r) const {
    return r < full_rounds_ ? begin_[r % stripes_] + r / stripes_ : begin_[longer_[r - full_rounds_]] + q_;
  }

 private:
  uint32_t stripes_, q_;
  uint64_t full_rounds_;
  std::vector<uint32_t> begin_, longer_;
};

// Below this many distinct counts (or N, if more) features are ranked by a counting sort.
constexpr uint64_t kCountingSortBuckets = uint64_t{1} << 22;

uint32_t most_of(std::span<const uint32_t> counts) {
  return counts.empty() ? 0 : *std::max_element(counts.begin(), counts.end());
}

bool fits_counting_sort(std::span<const uint32_t> counts, uint32_t most) {
  return uint64_t{most} < std::max<uint64_t>(counts.size(), kCountingSortBuckets);
}

// Features [begin, end) of the counting sort's order, dealt into out[begin, end), which
// may be the counts' own block. A feature's rank is the number of features more frequent
// than it, plus those as frequent before it in the file, so a block needs only the
// histogram of the counts ahead of it and of all N: ranks holding every count each deal a
// block, and the order is the same. Its one random access per feature is into the table
// of counts, which power-law data keeps small where it is busy; the radix sort of
// from_counts took 0.22 s of the Webspam-like set-up (16.6M features) in two random
// scatters.
void deal_by_counting(std::span<const uint32_t> counts, uint32_t most, const Dealer& deal, uint32_t begin,
                      uint32_t end, uint32_t* out) {
  std::vector<uint32_t> next(size_t{most} + 1, 0);
  for (uint32_t f = 0; f < begin; ++f) ++next[counts[f]];
  std::vector<uint32_t> all = next;
  for (size_t f = begin; f < counts.size(); ++f) ++all[counts[f]];
  uint32_t above = 0;
  for (size_t c = next.size(); c-- > 0;) {
    next[c] += above;
    above += all[c];
  }
  for (uint32_t f = begin; f < end; ++f) out[f] = deal(next[counts[f]]++);
}

}  // namespace

uint32_t FeatureOrder::stripes_for(int ranks) {
  const auto p = static_cast<uint32_t>(std::max(1, ranks));
  return (kMinStripes + p - 1) / p * p;
}

FeatureOrder FeatureOrder::from_counts(std::span<const uint32_t> counts, uint32_t stripes) {
  const auto dim = static_cast<uint32_t>(counts.size());
  const Dealer deal(dim, stripes);
  FeatureOrder order;
  order.internal_.resize(dim);
  const uint32_t most = most_of(counts);
  if (fits_counting_sort(counts, most)) {
    deal_by_counting(counts, most, deal, 0, dim, order.internal_.data());
    return order;
  }
  // Counts past the table's bound: a stable LSD radix sort on ~count, started in file
  // order, which breaks ties by index.
  std::vector<uint32_t> by_rank(dim), spare(dim);
  std::iota(by_rank.begin(), by_rank.end(), uint32_t{0});
  auto key = [&counts](uint32_t f) { return ~counts[f]; };
  for (int shift = 0; shift < 32 && (shift == 0 || most >> shift); shift += 16) {
    radix_pass(by_rank, spare, shift, key);
    by_rank.swap(spare);
  }
  for (uint32_t r = 0; r < dim; ++r) order.internal_[by_rank[r]] = deal(r);
  return order;
}

FeatureOrder FeatureOrder::by_popularity(const Dataset& train, MPI_Comm comm, const SumInPlace& how) {
  HugePageArray<uint32_t> counts(train.dim, 0);
  const uint32_t* index = train.index.data();
  const size_t nnz = train.nnz();
  for (size_t k = 0; k < nnz; ++k) {
    if (k + kAhead < nnz) __builtin_prefetch(&counts[index[k + kAhead]], 1);
    ++counts[index[k]];
  }
  // A count wraps past 2^32 rows, which would only make the order less apt; every rank
  // still gets the same one.
  sum_in_place(std::span<uint32_t>(counts.data(), counts.size()), comm, how);
  int rank = 0, ranks = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &ranks);
  const uint32_t most = most_of(counts);
  if (!fits_counting_sort(counts, most)) return from_counts(counts, stripes_for(ranks));
  // Every rank deals a block of the features and the blocks are gathered: each dealing
  // all N took 0.12-0.27 s of a Webspam-like P = 4 set-up on two cores, 0.19 s at P = 1.
  // Past the ranks whose exchanges stay pairwise, every rank deals all N, as the sum
  // hands such jobs back to MPI_Allreduce. A block is dealt over its own counts, which
  // are read no more, so the counts become the map and no rank writes a second N-sized
  // array's fresh pages.
  const bool divided = ranks <= how.pairwise_ranks;
  const auto begin = divided ? static_cast<uint32_t>(block_begin(train.dim, rank, ranks)) : 0;
  const auto end = divided ? static_cast<uint32_t>(block_begin(train.dim, rank + 1, ranks)) : train.dim;
  deal_by_counting(counts, most, Dealer(train.dim, stripes_for(ranks)), begin, end, counts.data());
  if (divided) gather_blocks_in_place(std::span<uint32_t>(counts.data(), counts.size()), comm, how.piece);
  FeatureOrder order;
  order.internal_ = std::move(counts);
  return order;
}

void FeatureOrder::apply(Dataset& d, int threads) const {
  const size_t nnz = d.nnz();
  // A mapped cache is read-only: the renumbered rows go into memory of their own.
  CsrArray<uint32_t> index;
  CsrArray<float> value;
  const bool copy = d.index.mapped() || d.value.mapped();
  if (copy) {
    index.owned().resize(nnz);
    value.owned().resize(nnz);
  }
  uint32_t* out_index = copy ? index.owned().data() : d.index.owned().data();
  float* out_value = copy ? value.owned().data() : d.value.owned().data();
  const auto rows = static_cast<int64_t>(d.rows());
  const uint32_t* in_index = d.index.data();
  const float* in_value = d.value.data();
  const uint32_t* map = internal_.data();
  const uint32_t n = dim();
#pragma omp parallel num_threads(std::max(1, threads))
  {
    std::vector<uint64_t> row, spare;
#pragma omp for schedule(dynamic, 256)
    for (int64_t r = 0; r < rows; ++r) {
      const uint64_t b = d.row_ptr[static_cast<size_t>(r)], e = d.row_ptr[static_cast<size_t>(r) + 1];
      row.resize(e - b);
      uint32_t high = 0;  // every bit set in some index, for sort_row
      for (uint64_t k = b; k < e; ++k) {
        // The next rows' entries are fetched too: a URL-like row is shorter than kAhead.
        if (k + kAhead < nnz && in_index[k + kAhead] < n) __builtin_prefetch(map + in_index[k + kAhead]);
        const uint32_t i = in_index[k] < n ? map[in_index[k]] : in_index[k];
        high |= i;
        row[k - b] = entry(i, in_value[k]);
      }
      sort_row(row, spare, high);
      for (size_t j = 0; j < row.size(); ++j) {
        out_index[b + j] = static_cast<uint32_t>(row[j] >> 32);
        out_value[b + j] = std::bit_cast<float>(static_cast<uint32_t>(row[j]));
      }
    }
  }
  if (copy) {
    d.index = std::move(index);
    d.value = std::move(value);
  }
}

std::vector<double> FeatureOrder::to_file_order(std::span<const double> internal_values) const {
  const size_t k = dim() ? internal_values.size() / dim() : 1;
  std::vector<double> out(internal_values.size());
  for (uint32_t i = 0; i < dim(); ++i)
    for (size_t c = 0; c < k; ++c) out[i * k + c] = internal_values[internal_[i] * k + c];
  return out;
}

}  // namespace mpisgd
