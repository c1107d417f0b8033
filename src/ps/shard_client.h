#pragma once
// A worker's side of the parameter-server protocol (messages.h): a sparse pull of the
// features its next batch touches and a sparse push of its update, each split by shard
// and sent to the S servers at once with non-blocking MPI (the replies' receives posted
// first), so a step costs one round trip to the slowest server, not S in turn.
// Cost per step: 3 S alpha + (4 k + 4 k + 8 m) beta for k features pulled, m pushed.
#include <cstdint>
#include <span>
#include <vector>

#include <mpi.h>

#include "comm/counted_comm.h"
#include "ps/channels.h"
#include "ps/messages.h"
#include "ps/shard_map.h"
#include "sparse/stream.h"

namespace mpisgd {

// One epoch of a worker.
struct ClientStats {
  double pull_s = 0;  // inside pulls, waiting included
  double push_s = 0;
  double wait_s = 0;  // of the pulls' time: servers holding them back (staleness bound)
};

class ShardClient {
 public:
  // Server s is rank first_server + s of `comm`. Messages travel on `channels` (ranks as
  // in `comm`); their time and bytes are counted on `comm`, except those to this rank's
  // own server, which stay in memory.
  ShardClient(CountedComm& comm, Channels channels, const ShardMap& map, int first_server);

  // values[j] = the model's value of features[j] (ascending) for step `step` of the epoch.
  void pull(uint64_t step, std::span<const uint32_t> features, std::vector<float>& values);
  // When the servers keep copies of what they sent each worker (client_copies.h: under
  // --drop-rate or --overlap): as pull() for the named `features` (none under --drop-rate),
  // and besides, ascending, the coordinates that changed (most, under --drop-rate) since
  // each server last answered this worker, with their values.
  void pull_changes(uint64_t step, std::span<const uint32_t> features, std::vector<float>& values,
                    std::vector<uint32_t>& changed, std::vector<float>& changed_values);
  // Sends this step's update (sorted pairs, the sum of `steps` worker steps) to the shards'
  // servers, computed on the values of the shards' `versions` (the last pull's if empty),
  // from which the servers count its staleness.
  void push(uint64_t step, double eta, std::span<const Pair<float>> update, uint64_t steps = 1,
            std::span<const uint64_t> versions = {});
  // Per server: the version of the values the last pull brought.
  const std::vector<uint64_t>& versions() const { return version_; }
  // Tells every server this worker is done with the epoch (after its last push).
  void done();
  // True once a server answered that the epoch's pushes are in (ShardServer::share_epoch).
  bool epoch_over() const { return epoch_over_; }

  ClientStats take_stats();

 private:
  // out_[s] = server s's part of a pull of `features` (ascending) for `step`; cuts_ set.
  void write_pulls(uint64_t step, std::span<const uint32_t> features);
  // Server s's answer (in_[s]): its header taken in, its values of the named features into
  // their places in `values`; returns the time the server held the pull.
  double read_values(size_t s, std::vector<float>& values);
  void send_all(int tag);  // out_[s] to every server, then waits for the receives posted
  void post_all(int tag);  // out_[s] to every server, leaving the requests in requests_

  CountedComm& comm_;
  Channels channels_;
  const ShardMap& map_;
  int first_server_;
  std::vector<Message> out_, in_;
  std::vector<MPI_Request> requests_;
  std::vector<uint64_t> version_;  // per server: the version of the last values pulled
  bool epoch_over_ = false;
  std::vector<size_t> cuts_;
  ClientStats stats_;
};

}  // namespace mpisgd
