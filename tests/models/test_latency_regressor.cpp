// Per-module latency regressors (models/latency_regressor.hpp): metrics and Algorithm 1 by hand,
// fitting on synthetic samples whose law is known, determinism.
#include <gtest/gtest.h>

#include <cmath>

#include "core/random_stream.hpp"
#include "models/latency_regressor.hpp"

using namespace coinfer;
using namespace coinfer::models;

TEST(Regressor, ScoreByHand) {
  // Relative errors 0.05, 0.15 and 1.0: P10 = 1/3, P20 = 2/3, MAPE = (0.05 + 0.15 + 1) / 3 = 0.4.
  const RegressorScore s = score_predictions({1.05, 2.3, 8.0}, {1.0, 2.0, 4.0});
  EXPECT_NEAR(s.p10, 1.0 / 3, 1e-12);
  EXPECT_NEAR(s.p20, 2.0 / 3, 1e-12);
  EXPECT_NEAR(s.mape, 0.4, 1e-12);
  // R^2 on log latency: log y = {0, ln2, ln4}, mean ln2, SS_tot = 2 ln2^2; residuals ln1.05, ln1.15, ln2.
  const double l2 = std::log(2.0);
  const double ss_res = std::pow(std::log(1.05), 2) + std::pow(std::log(1.15), 2) + l2 * l2;
  EXPECT_NEAR(s.r2, 1 - ss_res / (2 * l2 * l2), 1e-12);
  EXPECT_EQ(s.samples, 3);
  EXPECT_THROW(score_predictions({1}, {1, 2}), std::invalid_argument);
}

TEST(Regressor, AlgorithmOneFiltersAccuracyThenR2ThenSize) {
  std::map<RegressorKind, RegressorScore> v;
  v[RegressorKind::lr] = {0, 0.90, 0, 0.80, 10};
  v[RegressorKind::mlp] = {0, 0.94, 0, 0.95, 10};
  v[RegressorKind::medn] = {0, 0.95, 0, 0.96, 10};
  std::map<RegressorKind, double> size{{RegressorKind::lr, 16}, {RegressorKind::mlp, 3000}, {RegressorKind::medn, 2000}};
  // Accuracy: best 0.95, all three within 0.05 (lr exactly 0.05 below). R^2: best 0.96 (medn); lr's
  // 0.80 is beyond 0.05, mlp's 0.95 within. Smallest of {mlp, medn}: medn (2000 parameters).
  EXPECT_EQ(select_regressor(v, size, 0.05, 0.05), RegressorKind::medn);
  size[RegressorKind::mlp] = 1000;  // now mlp is the smaller of the two
  EXPECT_EQ(select_regressor(v, size, 0.05, 0.05), RegressorKind::mlp);
  v[RegressorKind::lr].r2 = 0.95;  // lr passes both filters and is the smallest
  EXPECT_EQ(select_regressor(v, size, 0.05, 0.05), RegressorKind::lr);
  v[RegressorKind::lr].p20 = 0.89;  // 0.06 below the best: filtered out by accuracy
  EXPECT_EQ(select_regressor(v, size, 0.05, 0.05), RegressorKind::mlp);
  // A candidate without its extra objective is an error, not a silent pick.
  size.erase(RegressorKind::medn);
  EXPECT_THROW(select_regressor(v, size, 0.05, 0.05), std::invalid_argument);
}

TEST(Regressor, TimeAndSpaceEfficientSelectionsDifferAsInTableSix) {
  // Table 6's bn+relu row in small: MLP and MEDN-XM both pass the filters (P20 0.83 and 0.81 within
  // 0.05 of 0.83; R^2 0.99 and 0.98 within 0.05 of 0.99); RF is 0.10 behind on P20. By time per sample
  // the MLP wins (0.43 < 0.48 ms), by size MEDN-XM (20 < 77 KB): the paper's two selections.
  std::map<RegressorKind, RegressorScore> v;
  v[RegressorKind::rf] = {0, 0.73, 0, 0.99, 10};
  v[RegressorKind::mlp] = {0, 0.83, 0, 0.99, 10};
  v[RegressorKind::medn_xm] = {0, 0.81, 0, 0.98, 10};
  const std::map<RegressorKind, double> time{{RegressorKind::rf, 50}, {RegressorKind::mlp, 0.4295}, {RegressorKind::medn_xm, 0.4820}};
  const std::map<RegressorKind, double> size{{RegressorKind::rf, 23620}, {RegressorKind::mlp, 77}, {RegressorKind::medn_xm, 20}};
  EXPECT_EQ(select_regressor(v, time, 0.05, 0.05), RegressorKind::mlp);
  EXPECT_EQ(select_regressor(v, size, 0.05, 0.05), RegressorKind::medn_xm);
}

TEST(Regressor, NamesRoundTrip) {
  EXPECT_EQ(all_regressor_kinds().size(), 8u);
  for (RegressorKind k : all_regressor_kinds()) EXPECT_EQ(regressor_kind_named(regressor_name(k)), k);
  EXPECT_FALSE(regressor_kind_named("svm").has_value());
}

namespace {

// A measured sample of `op` on the device type "synthetic": its features and its latency (mean = p50).
ModuleSample synthetic_sample(const std::string& op, std::vector<double> features, double latency_s, int count) {
  ModuleSample s;
  s.op = op;
  s.device_type = "synthetic";
  s.features = std::move(features);
  s.mean_s = s.p50_s = latency_s;
  s.count = count;
  return s;
}

// Samples of one op whose latency follows a known law: 3e-10 s x flops^0.9 / cpu_cores, flops =
// 2 x batch x nodes x in x out; the other features are consistent functions of the same parameters.
std::vector<ModuleSample> power_law_samples(int n, std::uint64_t seed, const std::string& op = "linear") {
  RandomStream r(seed, StreamPurpose::test, 7);
  std::vector<ModuleSample> out;
  for (int i = 0; i < n; ++i) {
    const double b = 1 + std::floor(r.next_unit() * 8), nodes = 100 + std::floor(r.next_unit() * 4900);
    const double in = 16 + std::floor(r.next_unit() * 240), o = 16 + std::floor(r.next_unit() * 240);
    const double cores = r.next_unit() < 0.5 ? 0.3 : 2;
    const double flops = 2 * b * nodes * in * o;
    out.push_back(synthetic_sample(
        op, {b, nodes, 0, in, o, 0, 1, cores, 1, flops, in * o * 4, b * nodes * in * 4, b * nodes * o * 4, b * nodes * (in + o) * 4 + in * o * 4, 0},
        3e-10 * std::pow(flops, 0.9) / cores, 3));
  }
  return out;
}

}  // namespace

TEST(Regressor, LearnsAPowerLawAndMeetsItsHeldOutSamples) {
  RegressorFitOptions o;
  o.seed = 3;
  const ModuleLatencyModel m = ModuleLatencyModel::fit(power_law_samples(300, 1), o);
  ASSERT_TRUE(m.has_op("linear"));
  const ModuleFit& f = m.fit_of("linear");
  EXPECT_EQ(f.train, 210);  // 7:1:2
  EXPECT_EQ(f.validation, 30);
  EXPECT_EQ(f.test, 60);
  // LR on log features is a power law: this law is inside its family, so it is exact up to log1p.
  EXPECT_GE(f.test_scores.at(RegressorKind::lr).p10, 0.98);
  // The networks must learn it too (a broken MLP or MEDN predicts far off).
  EXPECT_GE(f.test_scores.at(RegressorKind::mlp).p20, 0.9);
  EXPECT_GE(f.test_scores.at(RegressorKind::medn).p20, 0.9);
  // Fresh samples from the same law, predicted by the chosen regressor.
  std::vector<double> pred, meas;
  for (const auto& s : power_law_samples(100, 99)) pred.push_back(m.predict_seconds("linear", s.features)), meas.push_back(s.mean_s);
  EXPECT_GE(score_predictions(pred, meas).p20, 0.9);
  EXPECT_THROW(m.predict_seconds("gat", pred), std::out_of_range);
}

TEST(Regressor, DeterministicForASeedAndSeedsDiffer) {
  RegressorFitOptions o;
  o.epochs = 50;
  const auto samples = power_law_samples(80, 2);
  const ModuleLatencyModel a = ModuleLatencyModel::fit(samples, o), b = ModuleLatencyModel::fit(samples, o);
  o.seed = 2;
  const ModuleLatencyModel c = ModuleLatencyModel::fit(samples, o);
  const auto& x = samples.front().features;
  for (RegressorKind k : {RegressorKind::lr, RegressorKind::mlp, RegressorKind::medn})
    EXPECT_EQ(a.predict_seconds("linear", k, x), b.predict_seconds("linear", k, x)) << regressor_name(k);
  EXPECT_NE(a.predict_seconds("linear", RegressorKind::mlp, x), c.predict_seconds("linear", RegressorKind::mlp, x));
}

TEST(Regressor, OpsWithTooFewSamplesGetNone) {
  auto samples = power_law_samples(40, 4);
  const auto few = power_law_samples(5, 5, "gat");
  samples.insert(samples.end(), few.begin(), few.end());
  RegressorFitOptions o;
  o.epochs = 20;
  const ModuleLatencyModel m = ModuleLatencyModel::fit(samples, o);
  EXPECT_TRUE(m.has_op("linear"));
  EXPECT_FALSE(m.has_op("gat"));
  EXPECT_EQ(m.skipped().at("gat"), 5);
  // Outside the training range: a batch of 64 was never seen.
  auto x = samples.front().features;
  x[0] = 64;
  EXPECT_EQ(m.outside_training_range("linear", x), std::vector<std::string>{"batch"});
}

namespace {

// Latency 1 ms x s x m: s a sampling parameter, m a measurable one (both uniform in [1, 10]), and an
// inferable copy of s. Without m no regressor can do better than guess m's effect (a factor up to 10).
std::vector<ModuleSample> needs_the_measurable(int n) {
  RandomStream r(5, StreamPurpose::test, 21);
  std::vector<ModuleSample> out;
  for (int i = 0; i < n; ++i) {
    const double sp = 1 + 9 * r.next_unit(), m = 1 + 9 * r.next_unit();
    out.push_back(synthetic_sample("planted", {sp, m, sp}, 1e-3 * sp * m, 1));
  }
  return out;
}

}  // namespace

TEST(Regressor, AblationsSeeOnlyTheirClassesOfFeatures) {
  RegressorFitOptions o;
  o.epochs = 300;
  o.feature_names = {"s", "m", "d"};
  o.feature_classes = {"sampling", "measurable", "inferable"};
  o.kinds = all_regressor_kinds();
  o.forest.trees = 40;
  const ModuleLatencyModel model = ModuleLatencyModel::fit(needs_the_measurable(400), o);
  const ModuleFit& f = model.fit_of("planted");
  auto p20 = [&](RegressorKind k) { return f.test_scores.at(k).p20; };
  // With m: learnable (a product is a sum in log space: LR is exact).
  EXPECT_GE(p20(RegressorKind::lr), 0.95);
  EXPECT_GE(p20(RegressorKind::medn), 0.8);
  EXPECT_GE(p20(RegressorKind::medn_d), 0.8);
  EXPECT_GE(p20(RegressorKind::medn_xi), 0.8);  // drops only the inferable copy of s
  EXPECT_GE(p20(RegressorKind::rf), 0.5);
  // Without m (MEDN-XM, MEDN-R): a spread of 10x left unexplained; within 20 % only by luck.
  EXPECT_LT(p20(RegressorKind::medn_xm), 0.4);
  EXPECT_LT(p20(RegressorKind::medn_r), 0.4);
  // Fewer inputs, a smaller first layer; MEDN-D predicts with the same network shape as MEDN.
  EXPECT_LT(f.parameters.at(RegressorKind::medn_xm), f.parameters.at(RegressorKind::medn));
  EXPECT_LT(f.parameters.at(RegressorKind::medn_r), f.parameters.at(RegressorKind::medn_xm));
  EXPECT_EQ(f.parameters.at(RegressorKind::medn_d), f.parameters.at(RegressorKind::medn));
  EXPECT_EQ(f.size_bytes.at(RegressorKind::medn), 4 * f.parameters.at(RegressorKind::medn));
  EXPECT_GT(f.size_bytes.at(RegressorKind::rf), 0);
  for (RegressorKind k : all_regressor_kinds()) EXPECT_GT(f.time_per_sample_ms.at(k), 0) << regressor_name(k);
  // Both selections pick among the fitted kinds.
  EXPECT_TRUE(f.test_scores.count(f.chosen) && f.test_scores.count(f.chosen_time));
  // An ablation without classes cannot be fitted.
  o.feature_classes.clear();
  EXPECT_THROW(ModuleLatencyModel::fit(needs_the_measurable(40), o), std::invalid_argument);
}
