#pragma once
// A random forest regressor (Breiman's bagged CART trees), fitted by XGBoost's C library (Debian's
// libxgboost-dev) in its documented random-forest mode: one boosting round of `trees` parallel trees,
// learning rate 1, no L2 penalty (a leaf is then the mean of its samples' targets, as CART's), each tree
// on a row subsample and each split choosing among `features_per_split` random features. Used by the
// MEDN study (models/latency_regressor.hpp) as the paper's RF, configured as nn-Meter's (MEDN Sec. 3.1).
//
// Where it differs from scikit-learn's RandomForestRegressor: rows are subsampled without replacement
// (0.632 of them, the expected distinct share of a bootstrap sample), and splits are found by XGBoost's
// exact greedy algorithm on the squared error (the same criterion). Plain C++ header; the library stays
// inside the .cpp. Deterministic for a seed (one thread). Not thread-safe.
#include <cstdint>
#include <memory>
#include <vector>

namespace coinfer::models {

struct RandomForestOptions {
  int trees = 320;             // nn-Meter's conv predictor: n_estimators 320
  int max_depth = 70;          // max_depth 70
  int features_per_split = 6;  // max_features 6 (all of them when the data has fewer)
  double row_subsample = 0.632;
  double min_leaf_weight = 1;  // min_samples_leaf 1 (each sample weighs 1 with the squared error)
  std::uint64_t seed = 1;
};

class RandomForestRegressor {
 public:
  RandomForestRegressor();
  ~RandomForestRegressor();
  RandomForestRegressor(RandomForestRegressor&&) noexcept;
  RandomForestRegressor& operator=(RandomForestRegressor&&) noexcept;

  // Fits on rows x (n rows of equal width, n >= 1) and targets y (n values). Throws
  // std::invalid_argument on bad shapes or non-finite values, std::runtime_error with XGBoost's message
  // when the library fails.
  void fit(const std::vector<std::vector<float>>& x, const std::vector<float>& y, const RandomForestOptions& options);
  // Predictions for rows of the fitted width. Throws std::logic_error before fit().
  std::vector<float> predict(const std::vector<std::vector<float>>& x) const;
  // Bytes of the fitted model serialised (XGBoost's universal binary JSON): the forest's size on disk.
  long long size_bytes() const;
  // Number of tree nodes over the forest.
  long long nodes() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace coinfer::models
