#include "models/random_forest.hpp"

#include <xgboost/c_api.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

namespace coinfer::models {

namespace {

void check(int rc, const char* what) {
  if (rc != 0) throw std::runtime_error(std::string("random forest (XGBoost) ") + what + ": " + XGBGetLastError());
}

// Row-major float matrix of rows x, checked.
std::vector<float> dense(const std::vector<std::vector<float>>& x, size_t width) {
  std::vector<float> out;
  out.reserve(x.size() * width);
  for (const auto& r : x) {
    if (r.size() != width) throw std::invalid_argument("random forest: rows of different widths");
    for (float v : r) {
      if (!std::isfinite(v)) throw std::invalid_argument("random forest: a feature is not finite");
      out.push_back(v);
    }
  }
  return out;
}

struct Matrix {
  DMatrixHandle h = nullptr;
  Matrix(const std::vector<float>& data, size_t rows, size_t cols) {
    // missing = NaN: no value is missing (all checked finite).
    check(XGDMatrixCreateFromMat(data.data(), rows, cols, std::nanf(""), &h), "matrix");
  }
  ~Matrix() {
    if (h) XGDMatrixFree(h);
  }
  Matrix(const Matrix&) = delete;
  Matrix& operator=(const Matrix&) = delete;
};

}  // namespace

struct RandomForestRegressor::Impl {
  BoosterHandle booster = nullptr;
  size_t width = 0;
  ~Impl() {
    if (booster) XGBoosterFree(booster);
  }
};

RandomForestRegressor::RandomForestRegressor() : impl_(std::make_unique<Impl>()) {}
RandomForestRegressor::~RandomForestRegressor() = default;
RandomForestRegressor::RandomForestRegressor(RandomForestRegressor&&) noexcept = default;
RandomForestRegressor& RandomForestRegressor::operator=(RandomForestRegressor&&) noexcept = default;

void RandomForestRegressor::fit(const std::vector<std::vector<float>>& x, const std::vector<float>& y, const RandomForestOptions& o) {
  if (x.empty() || x.size() != y.size()) throw std::invalid_argument("random forest: need as many targets as rows, at least one");
  if (o.trees < 1 || o.max_depth < 1 || o.features_per_split < 1 || !(o.row_subsample > 0 && o.row_subsample <= 1))
    throw std::invalid_argument("random forest: trees, max_depth, features_per_split >= 1 and row_subsample in (0, 1]");
  for (float v : y)
    if (!std::isfinite(v)) throw std::invalid_argument("random forest: a target is not finite");
  const size_t width = x.front().size();
  if (width == 0) throw std::invalid_argument("random forest: rows have no features");
  const std::vector<float> data = dense(x, width);
  Matrix m(data, x.size(), width);
  check(XGDMatrixSetFloatInfo(m.h, "label", y.data(), y.size()), "labels");
  auto next = std::make_unique<Impl>();
  next->width = width;
  check(XGBoosterCreate(&m.h, 1, &next->booster), "create");
  const double per_split = std::min(1.0, static_cast<double>(o.features_per_split) / static_cast<double>(width));
  // Exact splits, as Breiman's forest; XGBoost 2 (Debian 13) samples features per split only with its
  // histogram method (exact: "column sample by node is not yet supported"), so there it uses hist, whose
  // split candidates are 256 quantile bins of each feature (Debian 12's XGBoost 1.7 keeps exact).
  int xgb_major = 0, xgb_minor = 0, xgb_patch = 0;
  XGBoostVersion(&xgb_major, &xgb_minor, &xgb_patch);
  const char* tree_method = (xgb_major >= 2 && per_split < 1) ? "hist" : "exact";
  const std::vector<std::pair<std::string, std::string>> params = {
      {"booster", "gbtree"},
      {"objective", "reg:squarederror"},
      {"tree_method", tree_method},
      {"num_parallel_tree", std::to_string(o.trees)},
      {"eta", "1"},
      {"lambda", "0"},
      {"alpha", "0"},
      {"gamma", "0"},
      {"base_score", "0"},
      {"max_depth", std::to_string(o.max_depth)},
      {"min_child_weight", std::to_string(o.min_leaf_weight)},
      {"subsample", std::to_string(o.row_subsample)},
      {"colsample_bynode", std::to_string(per_split)},
      {"nthread", "1"},
      {"seed", std::to_string(o.seed & 0x7FFFFFFFULL)},
      {"verbosity", "0"},
  };
  for (const auto& [k, v] : params) check(XGBoosterSetParam(next->booster, k.c_str(), v.c_str()), k.c_str());
  check(XGBoosterUpdateOneIter(next->booster, 0, m.h), "fit");
  impl_ = std::move(next);
}

std::vector<float> RandomForestRegressor::predict(const std::vector<std::vector<float>>& x) const {
  if (!impl_->booster) throw std::logic_error("random forest: predict before fit");
  if (x.empty()) return {};
  const std::vector<float> data = dense(x, impl_->width);
  Matrix m(data, x.size(), impl_->width);
  bst_ulong n = 0;
  const float* out = nullptr;
  check(XGBoosterPredict(impl_->booster, m.h, 0, 0, 0, &n, &out), "predict");
  return std::vector<float>(out, out + n);
}

long long RandomForestRegressor::size_bytes() const {
  if (!impl_->booster) return 0;
  bst_ulong n = 0;
  const char* buf = nullptr;
  check(XGBoosterSaveModelToBuffer(impl_->booster, "{\"format\": \"ubj\"}", &n, &buf), "save");
  return static_cast<long long>(n);
}

long long RandomForestRegressor::nodes() const {
  if (!impl_->booster) return 0;
  bst_ulong trees = 0;
  const char** dumps = nullptr;
  check(XGBoosterDumpModelEx(impl_->booster, "", 0, "text", &trees, &dumps), "dump");
  long long nodes = 0;
  for (bst_ulong t = 0; t < trees; ++t)
    nodes += std::count(dumps[t], dumps[t] + std::char_traits<char>::length(dumps[t]), '\n');  // one line per node
  return nodes;
}

}  // namespace coinfer::models
