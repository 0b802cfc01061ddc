// The random forest (models/random_forest.hpp, XGBoost in random-forest mode): it learns planted
// functions, averages its trees (not sums them, as boosting would), is deterministic for a seed, and
// refuses bad shapes.
#include <gtest/gtest.h>

#include <cmath>

#include "core/random_stream.hpp"
#include "models/random_forest.hpp"

using namespace coinfer;
using namespace coinfer::models;

namespace {
struct Data {
  std::vector<std::vector<float>> x;
  std::vector<float> y;
};
// y = 3 where x0 > 0.5, else -1; x1 and x2 are noise the forest must ignore.
Data step(int n, std::uint64_t index) {
  RandomStream r(7, StreamPurpose::test, index);
  Data d;
  for (int i = 0; i < n; ++i) {
    const float a = static_cast<float>(r.next_unit()), b = static_cast<float>(r.next_unit()), c = static_cast<float>(r.next_unit());
    d.x.push_back({a, b, c});
    d.y.push_back(a > 0.5f ? 3.0f : -1.0f);
  }
  return d;
}
}  // namespace

TEST(RandomForest, ConstantTargetIsPredictedExactly) {
  // Every leaf of every tree holds the mean of targets all equal to 2: the forest's average is 2. A
  // forest that summed its 50 trees (boosting's rule) would predict 100.
  Data d = step(60, 1);
  for (auto& v : d.y) v = 2.0f;
  RandomForestRegressor f;
  RandomForestOptions o;
  o.trees = 50;
  f.fit(d.x, d.y, o);
  for (float p : f.predict({{0.1f, 0.2f, 0.3f}, {0.9f, 0.9f, 0.9f}})) EXPECT_NEAR(p, 2.0f, 1e-5);
}

TEST(RandomForest, LearnsAStepAndIgnoresNoise) {
  const Data train = step(400, 2);
  RandomForestRegressor f;
  RandomForestOptions o;
  o.trees = 60;
  o.features_per_split = 2;
  f.fit(train.x, train.y, o);
  // Away from the boundary (|x0 - 0.5| > 0.05) each tree's leaf holds one side's samples only.
  const std::vector<float> p = f.predict({{0.2f, 0.9f, 0.1f}, {0.8f, 0.1f, 0.9f}, {0.05f, 0.5f, 0.5f}, {0.97f, 0.5f, 0.5f}});
  EXPECT_NEAR(p[0], -1.0f, 0.2f);
  EXPECT_NEAR(p[1], 3.0f, 0.2f);
  EXPECT_NEAR(p[2], -1.0f, 0.2f);
  EXPECT_NEAR(p[3], 3.0f, 0.2f);
  EXPECT_GT(f.size_bytes(), 0);
  EXPECT_GT(f.nodes(), 60);  // more than one node per tree
}

TEST(RandomForest, DeterministicForASeedAndSeedsDiffer) {
  Data d = step(200, 3);
  RandomStream noise(9, StreamPurpose::test, 4);
  for (auto& v : d.y) v += static_cast<float>(noise.next_unit());  // noisy targets: bagging shows in the average
  RandomForestOptions o;
  o.trees = 20;
  RandomForestRegressor a, b, c;
  a.fit(d.x, d.y, o);
  b.fit(d.x, d.y, o);
  o.seed = 2;
  c.fit(d.x, d.y, o);
  const std::vector<std::vector<float>> q = {{0.3f, 0.3f, 0.3f}, {0.6f, 0.2f, 0.7f}};
  EXPECT_EQ(a.predict(q), b.predict(q));
  EXPECT_NE(a.predict(q), c.predict(q));
}

TEST(RandomForest, RefusesBadInput) {
  RandomForestRegressor f;
  EXPECT_THROW(f.predict({{1.0f}}), std::logic_error);
  RandomForestOptions o;
  EXPECT_THROW(f.fit({}, {}, o), std::invalid_argument);
  EXPECT_THROW(f.fit({{1.0f}, {1.0f, 2.0f}}, {1.0f, 2.0f}, o), std::invalid_argument);
  EXPECT_THROW(f.fit({{1.0f}}, {NAN}, o), std::invalid_argument);
  o.trees = 0;
  EXPECT_THROW(f.fit({{1.0f}}, {1.0f}, o), std::invalid_argument);
}
