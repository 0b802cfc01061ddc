// SparOA's threshold predictor (sched/threshold_predictor.hpp): it learns a planted rule, including one
// that needs the previous operator (the sequence part), beats a linear regression where the rule is not
// linear, and its files round-trip and are checked at load.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <cmath>
#include <filesystem>
#include <fstream>

#include "core/input_error.hpp"
#include "core/random_stream.hpp"
#include "sched/threshold_predictor.hpp"

using namespace coinfer;

namespace {

// Sequences of 3..8 operators with inputs U(0, 1). The planted rule (scaled targets):
//   sparsity threshold  s_t = 0.2 + 0.6 x0_t
//   intensity threshold c_t = 0.3 + 0.4 x1_t x1_{t-1}   (x1_{-1} = 0.5): needs the previous operator, and
//                                                        is a product (not linear in the inputs)
std::vector<ThresholdSequence> planted(int n, std::uint64_t seed) {
  RandomStream rng(seed, StreamPurpose::test, 36);
  const int F = static_cast<int>(threshold_input_names().size());
  std::vector<ThresholdSequence> out;
  for (int i = 0; i < n; ++i) {
    ThresholdSequence s;
    s.name = "planted #" + std::to_string(i);
    const int T = 3 + static_cast<int>(rng.next_u64() % 6);
    double prev = 0.5;
    for (int t = 0; t < T; ++t) {
      std::vector<float> x(static_cast<size_t>(F));
      for (auto& v : x) v = static_cast<float>(rng.next_unit());
      s.targets.push_back({static_cast<float>(0.2 + 0.6 * x[0]), static_cast<float>(0.3 + 0.4 * x[1] * prev)});
      prev = x[1];
      s.inputs.push_back(x);
    }
    out.push_back(s);
  }
  return out;
}

}  // namespace

TEST(ThresholdPredictor, LearnsAPlantedRuleThatNeedsThePreviousOperator) {
  torch::set_num_threads(1);
  torch::manual_seed(1);
  const auto data = planted(160, 1);
  ThresholdNet net(static_cast<int>(threshold_input_names().size()));
  ThresholdTrainOptions o;
  o.epochs = 40;
  o.learning_rate = 2e-3;  // the paper's 1e-4 needs more epochs than a unit test should take
  const ThresholdTrainResult r = train_threshold_predictor(data, o, net);
  EXPECT_EQ(r.test_sequences, 32);
  std::printf("planted: test sparsity %.3f intensity %.3f; linear regression %.3f %.3f\n", r.test.sparsity, r.test.intensity, r.linear_test.sparsity,
              r.linear_test.intensity);
  // ±10 %: the sparsity threshold within 10 % of the truth; the intensity threshold within 10 % in
  // FLOPs per byte, i.e. within log10(1.1) / 5 = 0.008 of the scaled truth.
  EXPECT_GE(r.test.sparsity, 0.9) << r.test.sparsity;
  EXPECT_GE(r.test.intensity, 0.6) << r.test.intensity;
  // The linear regression cannot express the product with the previous operator's input.
  EXPECT_LT(r.linear_test.intensity, r.test.intensity);
}

// The epoch kept is the best one on the validation sequences, and it is the net returned: with every
// sequence the same, the returned net's test accuracy is exactly the validation score it was kept for
// (the last epoch's net would score otherwise: checked by leaving the restore out). A noisy rate makes
// the best epoch an early one.
TEST(ThresholdPredictor, TheNetReturnedIsTheEpochBestOnValidation) {
  torch::set_num_threads(1);
  torch::manual_seed(3);
  const ThresholdSequence one = planted(1, 5)[0];
  const std::vector<ThresholdSequence> data(20, one);  // 4 test, 2 validation, 14 train
  ThresholdNet net(static_cast<int>(threshold_input_names().size()));
  ThresholdTrainOptions o;
  o.epochs = 30;
  o.learning_rate = 3e-2;
  o.validation_share = 0.1;
  o.validate_every = 1;
  const ThresholdTrainResult r = train_threshold_predictor(data, o, net);
  EXPECT_EQ(r.test_sequences, 4);
  EXPECT_EQ(r.validation_sequences, 2);
  EXPECT_EQ(r.train_sequences, 14);
  ASSERT_GE(r.kept_epoch, 1);
  EXPECT_LT(r.kept_epoch, o.epochs) << "the test needs a best epoch before the last";
  EXPECT_EQ(r.test.sparsity, r.validation.sparsity);
  EXPECT_EQ(r.test.intensity, r.validation.intensity);
  // Without validation the last epoch is kept, and the split is as it was: 4 test, 16 train.
  ThresholdNet last(static_cast<int>(threshold_input_names().size()));
  o.validation_share = 0;
  const ThresholdTrainResult q = train_threshold_predictor(data, o, last);
  EXPECT_EQ(q.kept_epoch, o.epochs);
  EXPECT_EQ(q.validation_sequences, 0);
  EXPECT_EQ(q.train_sequences, 16);
  // Two sequences: one to test, and a validation one would leave none to train on, so there is none.
  ThresholdNet two(static_cast<int>(threshold_input_names().size()));
  o.validation_share = 0.1;
  o.epochs = 2;
  const ThresholdTrainResult t = train_threshold_predictor(std::vector<ThresholdSequence>(2, one), o, two);
  EXPECT_EQ(t.validation_sequences, 0);
  EXPECT_EQ(t.train_sequences, 1);
  EXPECT_EQ(t.kept_epoch, 2);
}

TEST(ThresholdPredictor, AccuracyCountsTheTenPercentToleranceByHand) {
  // Sparsity truths 0.5 and 0.05: 0.54 is within 10 % of 0.5 (0.05), 0.57 is not; 0.059 is within the
  // 0.01 floor of 0.05. Intensity truths are scaled: 0.6 means 10^3 - 1 = 999 FLOPs/byte; 0.605 means
  // 10^3.025 - 1 = 1058 (+5.9 %, within), 0.61 means 1121 (+12 %, not).
  const std::vector<std::array<float, 2>> truth = {{0.5f, 0.6f}, {0.5f, 0.6f}, {0.05f, 0.6f}};
  const std::vector<std::array<float, 2>> pred = {{0.54f, 0.605f}, {0.57f, 0.61f}, {0.059f, 0.6f}};
  const ThresholdAccuracy a = threshold_accuracy(pred, truth);
  EXPECT_NEAR(a.sparsity, 2.0 / 3, 1e-12);
  EXPECT_NEAR(a.intensity, 2.0 / 3, 1e-12);
}

TEST(ThresholdPredictor, FilesRoundTripAndAreCheckedAtLoad) {
  torch::set_num_threads(1);
  ThresholdNet net(static_cast<int>(threshold_input_names().size()));
  std::string tmpl = "/tmp/coinfer-thr-XXXXXX";
  const std::string dir = mkdtemp(tmpl.data());
  ThresholdPredictorInfo info;
  info.device_type = "jetson-orin-nano";
  save_threshold_predictor(dir + "/t.pt", info, net);
  ThresholdPredictorInfo back;
  ThresholdNet loaded = load_threshold_predictor(dir + "/t.pt", &back);
  EXPECT_EQ(back.device_type, "jetson-orin-nano");
  const std::vector<std::vector<float>> x(4, std::vector<float>(threshold_input_names().size(), 0.3f));
  net->eval();
  const auto a = predict_thresholds(net, x), b = predict_thresholds(loaded, x);
  for (size_t i = 0; i < a.size(); ++i) EXPECT_FLOAT_EQ(a[i].intensity, b[i].intensity);
  std::ofstream(dir + "/text.pt") << "hello\n";
  for (const std::string& bad : {dir + "/none.pt", dir + "/text.pt"}) {
    try {
      load_threshold_predictor(bad, nullptr);
      FAIL() << bad << " accepted";
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find(bad), std::string::npos) << e.what();
    }
  }
  std::filesystem::remove_all(dir);
}
