#include "ps/shard_client.h"

#include "ps/channel_waits.h"

#include <algorithm>
#include <climits>
#include <stdexcept>

namespace mpisgd {
namespace {

int message_bytes(const Message& m) {
  if (m.size() > static_cast<size_t>(INT_MAX))
    throw std::runtime_error("parameter server: a shard's part of one step is over 2 GiB, more than one MPI message; "
                             "use more --servers or a smaller --batch");
  return static_cast<int>(m.size());
}

}  // namespace

ShardClient::ShardClient(CountedComm& comm, Channels channels, const ShardMap& map, int first_server)
    : comm_(comm), channels_(channels), map_(map), first_server_(first_server), out_(static_cast<size_t>(map.servers())),
      in_(static_cast<size_t>(map.servers())), version_(static_cast<size_t>(map.servers()), 0) {
  requests_.reserve(2 * out_.size());
}

void ShardClient::pull(uint64_t step, std::span<const uint32_t> features, std::vector<float>& values) {
  const double start = MPI_Wtime();
  CountedComm::Timed timed(comm_, "a parameter-server pull");
  write_pulls(step, features);
  for (size_t s = 0; s < out_.size(); ++s) {
    in_[s].resize(sizeof(ValuesHeader) + (cuts_[s + 1] - cuts_[s]) * sizeof(float));
    requests_.push_back(comm_.irecv(in_[s].data(), message_bytes(in_[s]), MPI_BYTE,
                                    first_server_ + static_cast<int>(s), kTagValues, channels_.replies));
  }
  send_all(kTagPull);
  values.resize(features.size());
  double held = 0;
  for (size_t s = 0; s < in_.size(); ++s) held = std::max(held, read_values(s, values));
  stats_.wait_s += held;
  stats_.pull_s += MPI_Wtime() - start;
}

void ShardClient::pull_changes(uint64_t step, std::span<const uint32_t> features, std::vector<float>& values,
                               std::vector<uint32_t>& changed, std::vector<float>& changed_values) {
  const double start = MPI_Wtime();
  CountedComm::Timed timed(comm_, "a parameter-server pull");
  write_pulls(step, features);
  post_all(kTagPull);
  // An answer's size is known only once it is in, so no receive can be posted ahead: each
  // is probed for, from whichever server answers first, while the requests are still
  // going out. A worker that first waited for its (large, named) requests to go out
  // received no answers meanwhile, and a server blocked sending it one received nobody's
  // requests: three co-located ranks deadlocked in a cycle of such waits.
  for (size_t got = 0; got < in_.size(); ++got) {
    MPI_Status status;
    probe(channels_, MPI_ANY_SOURCE, kTagValues, channels_.replies, status);
    const auto s = static_cast<size_t>(status.MPI_SOURCE - first_server_);
    int bytes = 0;
    MPI_Get_count(&status, MPI_BYTE, &bytes);
    in_[s].resize(static_cast<size_t>(bytes));
    receive(comm_, channels_, in_[s].data(), bytes, status.MPI_SOURCE, kTagValues, channels_.replies);
  }
  wait_all(channels_, requests_);
  values.resize(features.size());
  changed.clear();
  changed_values.clear();
  double held = 0;
  for (size_t s = 0; s < in_.size(); ++s) {
    held = std::max(held, read_values(s, values));
    const size_t k = cuts_[s + 1] - cuts_[s];
    const size_t n = (in_[s].items<ValuesHeader>(1) - k * sizeof(float)) / (sizeof(uint32_t) + sizeof(float));
    const size_t at = changed.size();
    changed.resize(at + n);
    changed_values.resize(at + n);
    // The changes follow the k values: skip them, counted in items of the type read.
    in_[s].read<ValuesHeader>(k, n, changed.data() + at);
    in_[s].read<ValuesHeader>(k + n, n, changed_values.data() + at);
  }
  stats_.wait_s += held;
  stats_.pull_s += MPI_Wtime() - start;
}

void ShardClient::push(uint64_t step, double eta, std::span<const Pair<float>> update, uint64_t steps,
                       std::span<const uint64_t> versions) {
  if (versions.empty()) versions = version_;
  const double start = MPI_Wtime();
  CountedComm::Timed timed(comm_, "a parameter-server push");
  map_.cut(update, cuts_);
  requests_.clear();
  for (size_t s = 0; s < out_.size(); ++s) {
    const size_t from = cuts_[s], n = cuts_[s + 1] - cuts_[s];
    out_[s].start(PushHeader{step, versions[s], eta, steps});
    out_[s].append_field(update.subspan(from, n), &Pair<float>::index);
    out_[s].append_field(update.subspan(from, n), &Pair<float>::value);
  }
  send_all(kTagPush);
  stats_.push_s += MPI_Wtime() - start;
}

void ShardClient::write_pulls(uint64_t step, std::span<const uint32_t> features) {
  map_.cut(features, cuts_);
  requests_.clear();
  for (size_t s = 0; s < out_.size(); ++s) {
    out_[s].start(PullHeader{step});
    out_[s].append(features.subspan(cuts_[s], cuts_[s + 1] - cuts_[s]));
  }
}

double ShardClient::read_values(size_t s, std::vector<float>& values) {
  const auto h = in_[s].header<ValuesHeader>();
  version_[s] = h.version;
  epoch_over_ = epoch_over_ || h.epoch_over;
  in_[s].read<ValuesHeader>(0, cuts_[s + 1] - cuts_[s], values.data() + cuts_[s]);
  return h.held_s;
}

void ShardClient::done() {
  CountedComm::Timed timed(comm_);
  epoch_over_ = false;
  requests_.clear();
  for (Message& m : out_) m.resize(0);
  send_all(kTagDone);
}

void ShardClient::send_all(int tag) {
  post_all(tag);
  wait_all(channels_, requests_);
}

void ShardClient::post_all(int tag) {
  for (size_t s = 0; s < out_.size(); ++s) {
    requests_.push_back(comm_.isend(out_[s].data(), message_bytes(out_[s]), MPI_BYTE,
                                    first_server_ + static_cast<int>(s), tag, channels_.requests));
  }
}

ClientStats ShardClient::take_stats() {
  ClientStats s = stats_;
  stats_ = {};
  return s;
}

}  // namespace mpisgd
