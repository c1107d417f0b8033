#pragma once
// A rank's copy of the model under a parameter server. The model's state (the L2 scale,
// AdaGrad's sums) lives on the servers; a rank's Weights only hold the values it was sent,
// and are made with no L2 and no AdaGrad, so that their scale stays 1 and a value x can be
// written exactly as two steps of rate 1 (Weights has no setter): v - v = 0, then
// 0 - (-x) = x, both exact in floating point. The gradient then reads the pulled values
// bit for bit.
#include <cstdint>
#include <span>
#include <vector>

#include "comm/counted_comm.h"
#include "model/weights.h"
#include "ps/shard_map.h"
#include "ps/shard_server.h"

namespace mpisgd {

// w_i = values[j] for i = index[j] (ascending). Throws std::logic_error if `w` was made
// with L2 or AdaGrad, as then a step is not a plain subtraction.
void assign_values(Weights& w, std::span<const uint32_t> index, std::span<const float> values,
                   std::vector<float>& scratch);

// Collective over `comm`: every rank's `w` gets the whole model, each server broadcasting
// its shard (server s is rank first_server + s; `mine` is this rank's, if it serves).
// Cost: S broadcasts, N values received per rank.
void gather_model(CountedComm& comm, const ShardMap& map, int first_server, const ShardServer* mine, Weights& w);

}  // namespace mpisgd
