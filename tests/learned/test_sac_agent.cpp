// SAC in LibTorch (sched/sac_agent.hpp): it learns a one-step problem whose answer is known, it is
// deterministic for a seed, a checkpoint resumes exactly, and policy files are checked at load.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <cmath>
#include <filesystem>
#include <fstream>

#include "core/input_error.hpp"
#include "core/random_stream.hpp"
#include "sched/sac_agent.hpp"

using namespace coinfer;

namespace {

std::string temp_dir() {
  std::string tmpl = "/tmp/coinfer-sac-XXXXXX";
  return mkdtemp(tmpl.data());
}

// A bandit: random observations, every step terminal, reward -4 |a - 0.8|: the best action is 0.8
// whatever the state.
std::vector<SacTransition> bandit(int n, std::uint64_t seed) {
  RandomStream rng(seed, StreamPurpose::test, 0);
  std::vector<SacTransition> out;
  for (int i = 0; i < n; ++i) {
    SacTransition t;
    for (int k = 0; k < sac_feature_count(); ++k) t.obs.push_back(static_cast<float>(rng.next_unit() - 0.5));
    t.next_obs = t.obs;
    t.action = static_cast<float>(rng.next_unit());
    t.reward = static_cast<float>(-4 * std::fabs(t.action - 0.8));
    t.done = true;
    out.push_back(t);
  }
  return out;
}

std::vector<float> parameters(SacAgent& a) {
  std::vector<float> out;
  for (const auto& p : a.actor()->parameters()) {
    const torch::Tensor c = p.detach().contiguous();
    out.insert(out.end(), c.data_ptr<float>(), c.data_ptr<float>() + c.numel());
  }
  return out;
}

// The squashed mean action of the actor for a zero observation.
double mean_action(SacAgent& a) {
  torch::NoGradGuard g;
  auto [m, s] = a.actor()->forward(torch::zeros({1, sac_feature_count()}));
  return (std::tanh(m.item<double>()) + 1) / 2;
}

}  // namespace

TEST(SacAgent, LearnsTheBestActionOfABandit) {
  torch::set_num_threads(1);
  SacHyperParams h;
  h.batch_size = 64;
  SacAgent a(h, 1);
  for (const auto& t : bandit(2000, 1)) a.add(t);
  for (int round = 0; round < 10; ++round) a.update(150, static_cast<std::uint64_t>(round));
  // The temperature falls from 1 as the policy narrows towards its target entropy; the mean action
  // moves from about 0.5 (an untrained network) to the best one.
  EXPECT_NEAR(mean_action(a), 0.8, 0.08);
  EXPECT_LT(a.alpha(), 1.0);
}

TEST(SacAgent, SameSeedSameWeightsOtherSeedOthers) {
  torch::set_num_threads(1);
  SacHyperParams h;
  h.batch_size = 32;
  auto trained = [&](std::uint64_t seed) {
    SacAgent a(h, seed);
    for (const auto& t : bandit(200, 3)) a.add(t);
    a.update(20, 0);
    return parameters(a);
  };
  EXPECT_EQ(trained(5), trained(5));
  EXPECT_NE(trained(5), trained(6));
}

TEST(SacAgent, ACheckpointResumesExactly) {
  torch::set_num_threads(1);
  const std::string dir = temp_dir();
  SacHyperParams h;
  h.batch_size = 32;
  h.buffer_size = 150;  // the ring wraps: the checkpoint keeps the newest 150 in order
  const auto data = bandit(300, 4);
  SacAgent a(h, 9);
  for (int i = 0; i < 200; ++i) a.add(data[static_cast<size_t>(i)]);
  a.update(10, 0);
  SacPolicyInfo info;
  info.models = {"dgcnn/modelnet40"};
  a.save_checkpoint(dir + "/c.pt", info, "{\"episodes\": 3}");
  SacAgent b(h, 123);  // another seed: everything must come from the file
  EXPECT_EQ(b.load_checkpoint(dir + "/c.pt"), "{\"episodes\": 3}");
  EXPECT_EQ(b.buffer_size(), 150u);
  EXPECT_EQ(parameters(a), parameters(b));
  EXPECT_DOUBLE_EQ(a.alpha(), b.alpha());
  for (int i = 200; i < 300; ++i) a.add(data[static_cast<size_t>(i)]), b.add(data[static_cast<size_t>(i)]);
  a.update(10, 1);
  b.update(10, 1);
  EXPECT_EQ(parameters(a), parameters(b));  // optimiser state and buffer order came back too
  // A checkpoint for other networks is refused.
  SacHyperParams wide = h;
  wide.hidden = 32;
  SacAgent c(wide, 1);
  EXPECT_THROW(c.load_checkpoint(dir + "/c.pt"), InputError);
  std::filesystem::remove_all(dir);
}

TEST(SacAgent, PolicyFilesLoadAsTheSameNetworkAndForeignFilesAreRefused) {
  torch::set_num_threads(1);
  const std::string dir = temp_dir();
  SacAgent a(SacHyperParams{}, 2);
  SacPolicyInfo info;
  info.models = {"dgcnn/modelnet40"};
  info.provenance = "test";
  a.save_policy(dir + "/p.pt", info);
  TorchSacActor actor(dir + "/p.pt");
  EXPECT_EQ(actor.info().models, info.models);
  EXPECT_EQ(actor.info().provenance, "test");
  std::vector<std::vector<float>> obs(3, std::vector<float>(static_cast<size_t>(sac_feature_count()), 0.25f));
  std::vector<double> mean, log_std;
  actor.forward(obs, mean, log_std);
  ASSERT_EQ(mean.size(), 3u);
  {
    torch::NoGradGuard g;
    auto [m, s] = a.actor()->forward(torch::full({1, sac_feature_count()}, 0.25f));
    EXPECT_FLOAT_EQ(static_cast<float>(mean[0]), m.item<float>());
    EXPECT_FLOAT_EQ(static_cast<float>(log_std[2]), s.item<float>());
  }
  // Not a file, not an archive, a checkpoint where a policy is expected.
  EXPECT_THROW(TorchSacActor(dir + "/missing.pt"), InputError);
  std::ofstream(dir + "/junk.pt") << "not a policy";
  EXPECT_THROW(TorchSacActor(dir + "/junk.pt"), InputError);
  a.save_checkpoint(dir + "/c.pt", info, "{}");
  try {
    TorchSacActor x(dir + "/c.pt");
    ADD_FAILURE() << "a checkpoint loaded as a policy";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("coinfer-sac-checkpoint"), std::string::npos) << e.what();
  }
  std::filesystem::remove_all(dir);
}
