#pragma once
// The alpha-beta cost of each allreduce algorithm (thesis Table 3.1), extended to what
// the thesis leaves out: any P (the fold's two extra messages), the dense switch of the
// stream (a message never costs more than its dense form), the 8-byte stream header, and
// the growth of the partial sums between stages. That growth uses the thesis' uniform
// expectation f(k, M, m) = M (1 - (1 - k/M)^m) (section 3.2.1: the size of the union of m
// random k-subsets of M indices), over an effective index space M fitted to the result
// size seen on the previous call, so that skewed (power-law) or shared index sets are
// predicted as well as uniform ones.
#include <cstdint>

#include "comm/alpha_beta.h"
#include "sparse/stream.h"
#include "sparse/summation_speed.h"

namespace mpisgd {

struct CostInputs {
  int ranks = 1;
  uint64_t dim = 0;         // N
  double k = 0;             // the largest input, in items
  double universe = 0;      // M: the effective index space (N for uniform indices)
  int group_size = 8;       // early-switching DSAR
  size_t value_bytes = 4;   // sizeof(V)
  // K where sparse streams cross packed into runs of a feature's K values, 1 where they
  // cross as pairs: what a sparse item costs on the wire (wire_item_bytes). Where a stream
  // goes dense is decided in memory, on its pairs, either way.
  uint32_t run_columns = 1;
  DenseSwitch dense_switch;
  AlphaBeta network;
  // The thesis model leaves computation out; on a fast network (shared memory) the sums
  // cost as much as the transfers, so they are in.
  SummationSpeed compute;
  // Ranks per core (comm/core_sharing.h). Recursive doubling's stages are lock-step:
  // every rank merges at the same moment, so with more ranks than cores a stage waits for
  // the others' merges, unless its transfer takes longer. The Split phase sums parts as
  // they arrive, between the other ranks' sends, and measured no slower than one core
  // predicts; so only ssar-rec-dbl's cost uses this. (The dense switch keeps the one-core
  // figures too: derived with this factor it fell to 4-6%, and the split algorithms went
  // dense at densities where sparse was 3x faster.)
  double core_sharing = 1;
  // false: the time of the slowest rank's path (what auto compares); true: the mean over
  // ranks of the bytes each sends (alpha = 0, beta = 1), which differs when P is not a
  // power of two: only some ranks send the fold's messages and the stages'.
  bool mean_volume = false;
};

// Bytes a sparse item takes on the wire: a pair's, or, where streams are packed into runs
// of a feature's K = run_columns values (sparse/packed_stream.h), its value and its share
// of the run's 8-byte head; a stream is packed only where that is smaller.
double wire_item_bytes(size_t value_bytes, uint32_t run_columns);

// The density at which sending and summing a stream dense costs what sparse does:
// (value_bytes beta + dense add) / (wire item bytes beta + 2 merge items), never above
// the byte bound. Near the summation crossover on a fast network, near the byte bound on
// a slow one.
DenseSwitch network_dense_switch(const AlphaBeta& network, const SummationSpeed& compute, size_t value_bytes,
                                 uint32_t run_columns = 1);

// Whether packing a K-column model's pairs into runs (sparse/packed_stream.h) takes less
// time than the bytes it saves take on the wire: a run's 8-byte header serves K values
// where K pairs carry K indices, so packing saves 4 - 8/K bytes a pair, and packing,
// unpacking and the copy of the packed bytes cost 0.4-0.6 merge items a pair as
// summation_speed.h measures them (1.6-2.3 ns a pair at K = 10 and 3 against 4.1 ns a
// merge item, 2 cores). On shared memory packing does not pay; on a 1 Gbit/s link it
// does from K = 3.
bool pack_runs_pay(const AlphaBeta& network, const SummationSpeed& compute, uint32_t columns);

// Expected size of the union of m random k-subsets of [0, M).
double expected_union(double k, double universe, double m);

// The M for which expected_union(k, M, ranks) equals the observed result size.
double fit_universe(double k, double result, int ranks, double dim);

// The terms the algorithms' cost functions are built from, in seconds.
class CostModel {
 public:
  explicit CostModel(const CostInputs& in);

  const CostInputs& in() const { return in_; }
  double n() const { return n_; }
  double p() const { return in_.ranks; }
  // One message of `items` sparse items over `length` indices, as the stream sends it;
  // transfer() is its bandwidth term alone.
  double message(double items, double length) const;
  double transfer(double items, double length) const;
  // A message of a stream that is not summed on arrival (an allgather's block): dense
  // only past the byte bound.
  double gather_message(double items, double length) const;
  double gather_transfer(double items, double length) const;
  // Making a summed stream of `items` items over `length` indices ready to be gathered
  // (stream_sum.h compact): a scan of its values if the sum went dense.
  double compact(double items, double length) const;
  // Adding a received stream of `items` items over `length` indices to a partial sum.
  double sum(double items, double length) const;
  // Items in the sum of the inputs of `m` ranks.
  double sum_of(double m) const;
  // How many of a phase's messages count: 1 on the slowest path; in mean_volume mode the
  // share of ranks that send one, `senders` of P.
  double share(int senders) const;
  // Bandwidth term of `values` dense values.
  double dense(double values) const;
  // The Split phase over `parts` ranks (split_reduce.h), its messages posted together.
  double split(int parts) const;
  // The owner's sums of its range of `parts` inputs, as a tree in canonical order.
  double tree_sums(int parts) const;
  // A barrier: a message's latency for each doubling of the ranks.
  double barrier() const;
  // MPI's dense allgather of N values, and its reduce-scatter of `values` over `parts`.
  double dense_allgather() const;
  double dense_reduce_scatter(double values, int parts) const;

 private:
  bool goes_dense(double items, double length, double switch_density) const;
  double transfer(double items, double length, double switch_density) const;

  CostInputs in_;
  double n_;
};

}  // namespace mpisgd
