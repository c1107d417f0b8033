// Checkpoint files and directories: round trips of the format and of the states saved in
// it (weights, error feedback with each selector), detection of truncation and flipped
// bytes, the newest valid file chosen and the last two kept.
#include <catch2/catch.hpp>

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "checkpoint/checkpoint_dir.h"
#include "checkpoint/checkpoint_file.h"
#include "comm/state_blob.h"
#include "jobs/run_identity.h"
#include "model/weights.h"
#include "sparse/error_feedback.h"
#include "tests/sparse_pairs.h"

using namespace mpisgd;
namespace fs = std::filesystem;

namespace {

Checkpoint sample(int epoch) {
  Checkpoint c;
  c.config = "ranks=2\nstrategy=allreduce\n";
  c.data_id = 0x1234;
  c.epoch = epoch;
  c.step = 10u * static_cast<uint64_t>(epoch);
  c.weights = {std::byte{1}, std::byte{2}, std::byte{3}};
  c.ranks = {{std::byte{4}}, {}};
  c.run = {std::byte{5}, std::byte{6}};
  return c;
}

struct TempDir {
  fs::path path = fs::temp_directory_path() / ("mpisgd_ckpt_" + std::to_string(::getpid()));
  TempDir() { fs::remove_all(path); }
  ~TempDir() { fs::remove_all(path); }
};

void write(const fs::path& dir, int epoch) {
  const auto bytes = encode_checkpoint(sample(epoch));
  write_checkpoint_file(dir.string(), epoch, bytes);
}

std::string damage_newest(const fs::path& file, bool truncate) {
  if (truncate) {
    fs::resize_file(file, fs::file_size(file) - 7);
    return "truncated";
  }
  std::fstream f(file, std::ios::in | std::ios::out | std::ios::binary);
  f.seekp(30);
  f.put('\x5a');
  return "checksum mismatch";
}

}  // namespace

TEST_CASE("a checkpoint decodes to what was encoded", "[checkpoint]") {
  const Checkpoint c = sample(3);
  const Checkpoint d = decode_checkpoint(encode_checkpoint(c));
  CHECK(d.config == c.config);
  CHECK(d.data_id == c.data_id);
  CHECK(d.epoch == 3);
  CHECK(d.step == 30);
  CHECK(d.weights == c.weights);
  CHECK(d.ranks == c.ranks);
  CHECK(d.run == c.run);
}

TEST_CASE("any truncation or flipped byte of a checkpoint is detected", "[checkpoint]") {
  const auto bytes = encode_checkpoint(sample(1));
  for (size_t n = 0; n < bytes.size(); ++n)
    CHECK_THROWS(decode_checkpoint(std::span<const std::byte>(bytes.data(), n)));
  for (size_t i = 0; i < bytes.size(); ++i) {
    auto bad = bytes;
    bad[i] ^= std::byte{0x10};
    CHECK_THROWS(decode_checkpoint(bad));
  }
}

TEST_CASE("the directory keeps the last two and falls back past damaged ones", "[checkpoint]") {
  TempDir dir;
  for (int e = 1; e <= 4; ++e) write(dir.path, e);
  std::vector<std::string> names;
  for (const auto& entry : fs::directory_iterator(dir.path)) names.push_back(entry.path().filename().string());
  std::sort(names.begin(), names.end());
  CHECK(names == std::vector<std::string>{"epoch-000003.ckpt", "epoch-000004.ckpt"});

  const bool truncate = GENERATE(true, false);
  const std::string why = damage_newest(dir.path / "epoch-000004.ckpt", truncate);
  std::vector<std::string> rejected;
  auto found = newest_valid_checkpoint(dir.path.string(), rejected);
  REQUIRE(found);
  CHECK(found->checkpoint.epoch == 3);
  REQUIRE(rejected.size() == 1);
  CHECK_THAT(rejected[0], Catch::Contains("epoch-000004.ckpt") && Catch::Contains(why));

  damage_newest(dir.path / "epoch-000003.ckpt", true);
  rejected.clear();
  CHECK_FALSE(newest_valid_checkpoint(dir.path.string(), rejected));
  CHECK(rejected.size() == 2);
}

TEST_CASE("a missing checkpoint directory is an error", "[checkpoint]") {
  std::vector<std::string> rejected;
  CHECK_THROWS_WITH(newest_valid_checkpoint("/nonexistent/ckpt", rejected),
                    Catch::Contains("no such checkpoint directory"));
}

TEST_CASE("weights restore their exact bits", "[checkpoint]") {
  const bool adagrad = GENERATE(false, true);
  Weights a(50, 0.01, adagrad);
  const std::vector<uint32_t> index{1, 7, 30};
  const std::vector<float> g{0.5f, -2.0f, 1.25f};
  for (int s = 0; s < 5; ++s) a.step_sparse(0.3, index, g);
  StateWriter out;
  a.save_state(out);
  Weights b(50, 0.01, adagrad);
  StateReader in(out.bytes());
  b.load_state(in);
  in.expect_end();
  CHECK(b.hash() == a.hash());
  a.step_sparse(0.3, index, g);
  b.step_sparse(0.3, index, g);
  CHECK(b.hash() == a.hash());

  Weights other(51, 0.01, adagrad);
  StateReader again(out.bytes());
  CHECK_THROWS(other.load_state(again));
}

TEST_CASE("error feedback continues exactly after a restore", "[checkpoint]") {
  const std::string method = GENERATE("exact", "approx", "threshold-reuse", "gaussian", "sampled");
  SparsifyOptions o;
  o.k = 20;
  o.select = method;
  o.reuse_period = 3;
  o.seed = 9;
  auto update = [](int s) {
    SparseVector v;
    for (uint32_t i = 0; i < 400; i += 1 + (i + s) % 3) {
      v.index.push_back(i);
      v.value.push_back(static_cast<float>(((i * 7 + s * 13) % 29) - 14) / 8.0f);
    }
    return paired(v);
  };
  ErrorFeedback a(o, 400);
  for (int s = 0; s < 4; ++s) a.select(update(s).pairs());
  StateWriter out;
  a.save_state(out);
  ErrorFeedback b(o, 400);
  StateReader in(out.bytes());
  b.load_state(in);
  in.expect_end();
  for (int s = 4; s < 10; ++s) {
    const SparseVector sa = unpaired(a.select(update(s).pairs())), sb = unpaired(b.select(update(s).pairs()));
    CHECK(sa.index == sb.index);
    CHECK(sa.value == sb.value);
  }
  CHECK(a.residual().index == b.residual().index);
  CHECK(a.residual().value == b.residual().value);
}

TEST_CASE("run identities name each difference", "[checkpoint]") {
  TrainConfig c;
  const std::string saved = run_identity(c, 4, 100);
  CHECK(identity_differences(saved, run_identity(c, 4, 100)).empty());
  c.sgd.epochs = 99;  // a resume may extend the run
  c.profile = "p.csv";
  CHECK(identity_differences(saved, run_identity(c, 4, 100)).empty());
  c.sgd.threads = 2;
  c.strategy = "ssar-rec-dbl";
  const auto d = identity_differences(saved, run_identity(c, 3, 100));
  REQUIRE(d.size() == 3);
  CHECK_THAT(d[0], Catch::Contains("ranks: checkpoint has 4, this run 3"));
}

TEST_CASE("run identities let a resume change the device, said apart", "[checkpoint]") {
  TrainConfig c;
  c.sgd.device.kind = DeviceKind::gpu;
  const std::string saved = run_identity(c, 2, 100);
  c.sgd.device.kind = DeviceKind::cpu;
  const std::string now = run_identity(c, 2, 100);
  CHECK(identity_differences(saved, now).size() == 1);  // without the split, a difference like any other
  std::vector<std::string> rounding;
  CHECK(identity_differences(saved, now, &rounding).empty());
  REQUIRE(rounding.size() == 1);
  CHECK_THAT(rounding[0], Catch::Contains("device: checkpoint has gpu"));
  CHECK(identity_differences(now, saved, &rounding).empty());
}
