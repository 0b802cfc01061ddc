#include "models/latency_regressor.hpp"

#include <torch/torch.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <numeric>
#include <stdexcept>

#include "core/random_stream.hpp"
#include "core/enum_names.hpp"

namespace coinfer::models {

namespace {
constexpr auto kRegressorNames = enum_names<RegressorKind>({"lr", "rf", "mlp", "medn", "medn-d", "medn-xi", "medn-xm", "medn-r"});
static_assert(kRegressorNames.names_each_of(RegressorKind::lr, RegressorKind::medn_r));
}  // namespace

const char* regressor_name(RegressorKind k) { return kRegressorNames.name(k); }

const std::vector<RegressorKind>& all_regressor_kinds() {
  static const std::vector<RegressorKind> kinds = {RegressorKind::lr,     RegressorKind::rf,      RegressorKind::mlp,     RegressorKind::medn,
                                                   RegressorKind::medn_d, RegressorKind::medn_xi, RegressorKind::medn_xm, RegressorKind::medn_r};
  return kinds;
}

std::optional<RegressorKind> regressor_kind_named(const std::string& name) { return kRegressorNames.value(name); }

RegressorScore score_predictions(const std::vector<double>& predicted_s, const std::vector<double>& measured_s) {
  if (predicted_s.size() != measured_s.size()) throw std::invalid_argument("score_predictions: lengths differ");
  RegressorScore s;
  s.samples = static_cast<long long>(measured_s.size());
  if (measured_s.empty()) return s;
  double mean_log = 0;
  for (double y : measured_s) mean_log += std::log(y);
  mean_log /= static_cast<double>(measured_s.size());
  double ss_res = 0, ss_tot = 0;
  for (size_t i = 0; i < measured_s.size(); ++i) {
    const double y = measured_s[i], p = predicted_s[i];
    const double rel = std::abs(p - y) / y;
    s.p10 += rel <= 0.10;
    s.p20 += rel <= 0.20;
    s.mape += rel;
    const double lp = std::log(std::max(p, 1e-12)), ly = std::log(y);
    ss_res += (lp - ly) * (lp - ly);
    ss_tot += (ly - mean_log) * (ly - mean_log);
  }
  const double n = static_cast<double>(measured_s.size());
  s.p10 /= n, s.p20 /= n, s.mape /= n;
  s.r2 = ss_tot > 0 ? 1 - ss_res / ss_tot : (ss_res == 0 ? 1 : 0);
  return s;
}

RegressorKind select_regressor(const std::map<RegressorKind, RegressorScore>& validation, const std::map<RegressorKind, double>& extra, double eps_a,
                               double eps_r) {
  if (validation.empty()) throw std::invalid_argument("select_regressor: no candidates");
  for (const auto& [k, s] : validation)
    if (!extra.count(k)) throw std::invalid_argument(std::string("select_regressor: no extra objective for ") + regressor_name(k));
  double best_acc = -1;
  for (const auto& [k, s] : validation) best_acc = std::max(best_acc, s.p20);
  std::vector<RegressorKind> y1;
  for (const auto& [k, s] : validation)
    if (best_acc - s.p20 <= eps_a + 1e-12) y1.push_back(k);
  double best_r2 = -1e300;
  for (RegressorKind k : y1) best_r2 = std::max(best_r2, validation.at(k).r2);
  std::vector<RegressorKind> y2;
  for (RegressorKind k : y1)
    if (best_r2 - validation.at(k).r2 <= eps_r + 1e-12) y2.push_back(k);
  RegressorKind chosen = y2.front();  // std::map order: RegressorKind's
  for (RegressorKind k : y2)
    if (extra.at(k) < extra.at(chosen)) chosen = k;
  return chosen;
}

namespace {

// Scaling of raw features into [0, 1]: log1p, then min-max over the training samples.
struct Scaler {
  std::vector<double> lo, hi;
  torch::Tensor apply(const std::vector<std::vector<double>>& x) const {
    const int64_t n = static_cast<int64_t>(x.size()), f = static_cast<int64_t>(lo.size());
    auto t = torch::empty({n, f}, torch::kFloat32);
    auto a = t.accessor<float, 2>();
    for (int64_t i = 0; i < n; ++i)
      for (int64_t j = 0; j < f; ++j) {
        const double v = std::log1p(std::max(0.0, x[i][j]));
        a[i][j] = hi[j] > lo[j] ? static_cast<float>((v - lo[j]) / (hi[j] - lo[j])) : 0.0f;
      }
    return t;
  }
};

torch::nn::Sequential mlp(const std::vector<int64_t>& widths, bool relu_last) {
  torch::nn::Sequential s;
  for (size_t i = 0; i + 1 < widths.size(); ++i) {
    s->push_back(torch::nn::Linear(widths[i], widths[i + 1]));
    if (i + 2 < widths.size() || relu_last) s->push_back(torch::nn::LeakyReLU(torch::nn::LeakyReLUOptions().negative_slope(0.01)));
  }
  return s;
}

long long count_parameters(const torch::nn::Module& m) {
  long long n = 0;
  for (const auto& p : m.parameters()) n += p.numel();
  return n;
}

// The feature columns a regressor sees: all of them, but for MEDN's ablations by parameter class.
std::vector<int64_t> columns_for(RegressorKind k, const std::vector<std::string>& classes, size_t features) {
  std::vector<int64_t> cols;
  const bool ablation = k == RegressorKind::medn_xi || k == RegressorKind::medn_xm || k == RegressorKind::medn_r;
  if (ablation && classes.size() != features)
    throw std::invalid_argument(std::string(regressor_name(k)) + " needs the features' classes (sampling, measurable, inferable)");
  for (size_t j = 0; j < features; ++j) {
    const std::string c = ablation ? classes[j] : "";
    if (k == RegressorKind::medn_xi && c == "inferable") continue;
    if (k == RegressorKind::medn_xm && c == "measurable") continue;
    if (k == RegressorKind::medn_r && c != "sampling") continue;
    cols.push_back(static_cast<int64_t>(j));
  }
  if (cols.empty()) throw std::invalid_argument(std::string(regressor_name(k)) + ": no feature of the classes it keeps");
  return cols;
}

// Index of a kind in the seed streams: lr, mlp and medn keep the indices they had before the others
// existed (so LUT fills stay as they were); the others get streams of their own (see fit_one).
std::uint64_t stream_index(RegressorKind k) {
  // by the enum's order: lr, rf, mlp, medn, medn_d, medn_xi, medn_xm, medn_r
  constexpr std::uint64_t kIndex[] = {0, 3, 1, 2, 4, 5, 6, 7};
  static_assert(sizeof kIndex / sizeof kIndex[0] == static_cast<std::size_t>(RegressorKind::medn_r) + 1);
  return kIndex[static_cast<std::size_t>(k)];
}

// One fitted regressor on scaled inputs -> log latency.
struct Fitted {
  RegressorKind kind;
  std::vector<int64_t> columns;  // of the scaled features
  torch::Tensor lr_weights;      // [f + 1] (LR)
  std::shared_ptr<RandomForestRegressor> forest;
  mutable torch::nn::Sequential net{nullptr};        // MLP, or MEDN's encoder
  mutable torch::nn::Sequential predictor{nullptr};  // MEDN's prediction decoder
  long long parameters = 0, size_bytes = 0;

  torch::Tensor select(const torch::Tensor& x) const {
    if (static_cast<int64_t>(columns.size()) == x.size(1)) return x;
    return x.index_select(1, torch::tensor(columns, torch::kInt64));
  }
  torch::Tensor predict_log(const torch::Tensor& full) const {
    torch::NoGradGuard no_grad;
    const torch::Tensor x = select(full);
    if (kind == RegressorKind::lr) return torch::cat({x, torch::ones({x.size(0), 1})}, 1).to(torch::kFloat64).matmul(lr_weights).to(torch::kFloat32);
    if (kind == RegressorKind::rf) {
      std::vector<std::vector<float>> rows(static_cast<size_t>(x.size(0)));
      const torch::Tensor xc = x.contiguous();
      auto a = xc.accessor<float, 2>();
      for (int64_t i = 0; i < x.size(0); ++i)
        for (int64_t j = 0; j < x.size(1); ++j) rows[static_cast<size_t>(i)].push_back(a[i][j]);
      return torch::tensor(forest->predict(rows));
    }
    if (kind == RegressorKind::mlp) return net->forward(x).squeeze(1);
    return predictor->forward(net->forward(x)).squeeze(1);
  }
};

Fitted fit_one(RegressorKind kind, const torch::Tensor& full_x, const torch::Tensor& y, const RegressorFitOptions& o, std::uint64_t stream,
               const std::vector<int64_t>& columns) {
  Fitted f;
  f.kind = kind;
  f.columns = columns;
  const torch::Tensor x = f.select(full_x);
  const int64_t n = x.size(0), d = x.size(1);
  const std::uint64_t idx = stream_index(kind);
  const bool legacy = idx < 3;  // lr, mlp, medn: the streams they always had
  if (kind == RegressorKind::lr) {
    // Ridge-stabilised least squares (lambda 1e-6) in double precision.
    auto a = torch::cat({x, torch::ones({n, 1})}, 1).to(torch::kFloat64);
    auto ata = a.t().matmul(a) + 1e-6 * torch::eye(d + 1, torch::kFloat64);
    f.lr_weights = torch::linalg_solve(ata, a.t().matmul(y.to(torch::kFloat64)), true);
    f.parameters = d + 1;
    f.size_bytes = (d + 1) * 8;
    return f;
  }
  if (kind == RegressorKind::rf) {
    std::vector<std::vector<float>> rows(static_cast<size_t>(n));
    const torch::Tensor xc = x.contiguous();
    auto a = xc.accessor<float, 2>();
    for (int64_t i = 0; i < n; ++i)
      for (int64_t j = 0; j < d; ++j) rows[static_cast<size_t>(i)].push_back(a[i][j]);
    const torch::Tensor yc = y.contiguous();
    std::vector<float> targets(yc.data_ptr<float>(), yc.data_ptr<float>() + n);
    RandomForestOptions ro = o.forest;
    ro.seed = mix64(o.seed ^ mix64((1ULL << 40) + stream * 8 + idx));
    f.forest = std::make_shared<RandomForestRegressor>();
    f.forest->fit(rows, targets, ro);
    f.parameters = f.forest->nodes();
    f.size_bytes = f.forest->size_bytes();
    return f;
  }
  torch::manual_seed(legacy ? mix64(o.seed ^ mix64(stream * 3 + idx)) : mix64(o.seed ^ mix64((1ULL << 41) + stream * 8 + idx)));
  torch::nn::Sequential recon{nullptr};
  std::vector<torch::Tensor> params;
  if (kind == RegressorKind::mlp) {
    std::vector<int64_t> widths = {d};
    widths.insert(widths.end(), o.mlp_hidden.begin(), o.mlp_hidden.end());
    widths.push_back(1);
    f.net = mlp(widths, false);
    for (auto& p : f.net->parameters()) params.push_back(p);
    f.parameters = count_parameters(*f.net);
  } else {
    if (o.medn_encoder.empty()) throw std::invalid_argument("MEDN needs at least one encoder width");
    std::vector<int64_t> enc = {d};
    enc.insert(enc.end(), o.medn_encoder.begin(), o.medn_encoder.end());
    const int64_t latent = enc.back();
    f.net = mlp(enc, false);  // encoder (a linear latent layer)
    std::vector<int64_t> pred = {latent};
    for (int64_t w = latent / 2; w > 1; w /= 2) pred.push_back(w);
    pred.push_back(1);
    f.predictor = mlp(pred, false);  // prediction decoder: hidden widths halve
    for (auto* m : {&f.net, &f.predictor})
      for (auto& p : (*m)->parameters()) params.push_back(p);
    if (kind != RegressorKind::medn_d) {
      recon = mlp(std::vector<int64_t>(enc.rbegin(), enc.rend()), false);  // symmetric reconstruction decoder
      for (auto& p : recon->parameters()) params.push_back(p);
    }
    f.parameters = count_parameters(*f.net) + count_parameters(*f.predictor);  // what prediction needs
  }
  f.size_bytes = f.parameters * 4;
  const double recon_weight = kind == RegressorKind::medn_d ? 0.0 : o.medn_weight_ratio;
  torch::optim::Adam opt(params, torch::optim::AdamOptions(o.learning_rate));
  RandomStream rng(o.seed, StreamPurpose::regressor, legacy ? stream * 8 + 4 + idx : (1ULL << 42) + stream * 8 + idx);
  const int64_t batch = n > 2048 ? 256 : n;
  std::vector<int64_t> order(static_cast<size_t>(n));
  std::iota(order.begin(), order.end(), 0);
  for (int e = 0; e < o.epochs; ++e) {
    if (batch < n)
      for (int64_t i = n - 1; i > 0; --i) std::swap(order[i], order[rng.next_u64() % static_cast<std::uint64_t>(i + 1)]);
    for (int64_t s = 0; s < n; s += batch) {
      auto idx_t = torch::from_blob(order.data() + s, {std::min(batch, n - s)}, torch::kInt64);
      auto xb = x.index_select(0, idx_t), yb = y.index_select(0, idx_t);
      opt.zero_grad();
      torch::Tensor loss;
      if (kind == RegressorKind::mlp) {
        loss = torch::smooth_l1_loss(f.net->forward(xb).squeeze(1), yb);
      } else {
        auto z = f.net->forward(xb);
        loss = torch::smooth_l1_loss(f.predictor->forward(z).squeeze(1), yb);
        if (recon) loss = loss + recon_weight * torch::smooth_l1_loss(recon->forward(z), xb);
      }
      loss.backward();
      opt.step();
    }
  }
  return f;
}

// Predictions (standardised log latency) back to seconds.
std::vector<double> to_seconds(const torch::Tensor& z, double y_mean, double y_std) {
  std::vector<double> out(static_cast<size_t>(z.size(0)));
  auto a = z.to(torch::kFloat64).contiguous();
  for (size_t i = 0; i < out.size(); ++i) out[i] = std::exp(y_mean + y_std * a[static_cast<int64_t>(i)].item<double>());
  return out;
}

}  // namespace

struct ModuleLatencyModel::Impl {
  struct OpModels {
    Scaler scaler;
    double y_mean = 0, y_std = 1;  // of log latency over the training samples: networks fit (log y - mean) / std
    std::map<RegressorKind, Fitted> models;
  };
  std::map<std::string, OpModels> ops;
};

ModuleLatencyModel::ModuleLatencyModel() : impl_(std::make_unique<Impl>()) {}
ModuleLatencyModel::~ModuleLatencyModel() = default;
ModuleLatencyModel::ModuleLatencyModel(ModuleLatencyModel&&) noexcept = default;
ModuleLatencyModel& ModuleLatencyModel::operator=(ModuleLatencyModel&&) noexcept = default;

ModuleLatencyModel ModuleLatencyModel::fit(const std::vector<ModuleSample>& samples, const RegressorFitOptions& o,
                                           const std::function<void(int, int, const std::string&)>& progress) {
  if (o.kinds.empty()) throw std::invalid_argument("no regressor kinds to fit");
  for (const auto& c : o.feature_classes)
    if (c != "sampling" && c != "measurable" && c != "inferable")
      throw std::invalid_argument("feature class '" + c + "' (sampling, measurable or inferable)");
  if (!o.feature_classes.empty() && !o.feature_names.empty() && o.feature_classes.size() != o.feature_names.size())
    throw std::invalid_argument("as many feature classes as feature names");
  const size_t width = o.feature_names.empty() ? module_feature_names().size() : o.feature_names.size();
  for (const auto& s : samples)
    if (s.features.size() != width)
      throw std::invalid_argument("a sample of op '" + s.op + "' has " + std::to_string(s.features.size()) + " features, the names " +
                                  std::to_string(width));
  const int threads_before = torch::get_num_threads();
  torch::set_num_threads(1);  // deterministic reductions
  ModuleLatencyModel out;
  std::map<std::string, std::vector<const ModuleSample*>> by_op;
  for (const auto& s : samples) by_op[s.op].push_back(&s);
  int done = 0;
  std::uint64_t op_index = 0;
  for (const auto& [op, list] : by_op) {
    ++op_index;
    if (progress) progress(done, static_cast<int>(by_op.size()), op);
    ++done;
    if (static_cast<int>(list.size()) < o.min_samples) {
      out.skipped_[op] = static_cast<long long>(list.size());
      continue;
    }
    // 7:1:2 split, shuffled by the op's own stream (the op's name, not its rank, names the stream).
    std::uint64_t name_hash = 1469598103934665603ULL;
    for (char c : op) name_hash = (name_hash ^ static_cast<unsigned char>(c)) * 1099511628211ULL;
    RandomStream rng(o.seed, StreamPurpose::regressor, mix64(name_hash) & 0xFFFFFFFFULL);
    std::vector<size_t> order(list.size());
    std::iota(order.begin(), order.end(), 0);
    for (size_t i = order.size() - 1; i > 0; --i) std::swap(order[i], order[rng.next_u64() % (i + 1)]);
    const size_t n = list.size(), n_train = std::max<size_t>(1, n * 7 / 10), n_val = std::max<size_t>(1, n / 10);
    auto part = [&](size_t a, size_t b, std::vector<std::vector<double>>& x, std::vector<double>& y) {
      for (size_t i = a; i < b && i < n; ++i) x.push_back(list[order[i]]->features), y.push_back(list[order[i]]->mean_s);
    };
    std::vector<std::vector<double>> xtr, xva, xte;
    std::vector<double> ytr, yva, yte;
    part(0, n_train, xtr, ytr);
    part(n_train, n_train + n_val, xva, yva);
    part(n_train + n_val, n, xte, yte);
    Impl::OpModels m;
    const size_t F = xtr.front().size();
    ModuleFit fit;
    fit.op = op;
    fit.train = static_cast<long long>(xtr.size()), fit.validation = static_cast<long long>(xva.size()),
    fit.test = static_cast<long long>(xte.size());
    m.scaler.lo.assign(F, 1e300), m.scaler.hi.assign(F, -1e300);
    fit.feature_min.assign(F, 1e300), fit.feature_max.assign(F, -1e300);
    for (const auto& r : xtr)
      for (size_t j = 0; j < F; ++j) {
        const double v = std::log1p(std::max(0.0, r[j]));
        m.scaler.lo[j] = std::min(m.scaler.lo[j], v), m.scaler.hi[j] = std::max(m.scaler.hi[j], v);
        fit.feature_min[j] = std::min(fit.feature_min[j], r[j]), fit.feature_max[j] = std::max(fit.feature_max[j], r[j]);
      }
    auto xt = m.scaler.apply(xtr);
    // The networks fit standardised log latency: log latencies near -10 would take Adam at 0.005 (steps
    // of about the learning rate) thousands of epochs to reach from a zero-mean start.
    double mean = 0, var = 0;
    for (double v : ytr) mean += std::log(v);
    mean /= static_cast<double>(ytr.size());
    for (double v : ytr) var += (std::log(v) - mean) * (std::log(v) - mean);
    m.y_mean = mean;
    m.y_std = ytr.size() > 1 && var > 0 ? std::sqrt(var / static_cast<double>(ytr.size() - 1)) : 1;
    std::vector<float> ly;
    for (double v : ytr) ly.push_back(static_cast<float>((std::log(v) - m.y_mean) / m.y_std));
    auto yt = torch::tensor(ly);
    std::vector<std::vector<int64_t>> columns;
    for (RegressorKind k : o.kinds) columns.push_back(columns_for(k, o.feature_classes, F));
    const torch::Tensor xva_t = m.scaler.apply(xva), xte_t = xte.empty() ? torch::Tensor() : m.scaler.apply(xte);
    for (size_t ki = 0; ki < o.kinds.size(); ++ki) {
      const RegressorKind k = o.kinds[ki];
      if (m.models.count(k)) continue;  // listed twice
      Fitted f = fit_one(k, xt, yt, o, op_index, columns[ki]);
      fit.parameters[k] = f.parameters;
      fit.size_bytes[k] = f.size_bytes;
      fit.validation_scores[k] = score_predictions(to_seconds(f.predict_log(xva_t), m.y_mean, m.y_std), yva);
      fit.test_scores[k] = xte.empty() ? RegressorScore{} : score_predictions(to_seconds(f.predict_log(xte_t), m.y_mean, m.y_std), yte);
      // Time per sample: one test (else validation) sample at a time, scaling included; the median.
      const auto& timed = xte.empty() ? xva : xte;
      std::vector<double> ms;
      for (size_t i = 0; i < timed.size() && static_cast<int>(i) < o.timing_samples; ++i) {
        const auto t0 = std::chrono::steady_clock::now();
        const double p = to_seconds(f.predict_log(m.scaler.apply({timed[i]})), m.y_mean, m.y_std)[0];
        const auto t1 = std::chrono::steady_clock::now();
        if (p >= 0) ms.push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
      }
      std::sort(ms.begin(), ms.end());
      fit.time_per_sample_ms[k] = ms.empty() ? 0 : ms[ms.size() / 2];
      m.models.emplace(k, std::move(f));
    }
    std::map<RegressorKind, double> size, time;
    for (const auto& [k, b] : fit.size_bytes) size[k] = static_cast<double>(b);
    for (const auto& [k, t] : fit.time_per_sample_ms) time[k] = t;
    fit.chosen = select_regressor(fit.validation_scores, size, o.epsilon_accuracy, o.epsilon_r2);
    fit.chosen_time = select_regressor(fit.validation_scores, time, o.epsilon_accuracy, o.epsilon_r2);
    fit.feature_names = o.feature_names.empty() ? module_feature_names() : o.feature_names;
    out.impl_->ops.emplace(op, std::move(m));
    out.fits_.push_back(std::move(fit));
  }
  if (progress) progress(done, static_cast<int>(by_op.size()), "");
  torch::set_num_threads(threads_before);
  return out;
}

bool ModuleLatencyModel::has_op(const std::string& op) const { return impl_->ops.count(op) != 0; }

const ModuleFit& ModuleLatencyModel::fit_of(const std::string& op) const {
  for (const auto& f : fits_)
    if (f.op == op) return f;
  throw std::out_of_range("no latency regressor for op '" + op + "'");
}

double ModuleLatencyModel::predict_seconds(const std::string& op, const std::vector<double>& features) const {
  return predict_seconds(op, fit_of(op).chosen, features);
}

double ModuleLatencyModel::predict_seconds(const std::string& op, RegressorKind kind, const std::vector<double>& features) const {
  auto it = impl_->ops.find(op);
  if (it == impl_->ops.end()) throw std::out_of_range("no latency regressor for op '" + op + "'");
  if (features.size() != it->second.scaler.lo.size()) throw std::invalid_argument("feature count differs from the regressor's");
  if (!it->second.models.count(kind)) throw std::out_of_range(std::string("no ") + regressor_name(kind) + " regressor for op '" + op + "'");
  return to_seconds(it->second.models.at(kind).predict_log(it->second.scaler.apply({features})), it->second.y_mean, it->second.y_std)[0];
}

std::vector<std::string> ModuleLatencyModel::outside_training_range(const std::string& op, const std::vector<double>& features) const {
  const ModuleFit& f = fit_of(op);
  std::vector<std::string> out;
  for (size_t j = 0; j < features.size() && j < f.feature_min.size(); ++j)
    if (features[j] < f.feature_min[j] * (1 - 1e-9) || features[j] > f.feature_max[j] * (1 + 1e-9))
      out.push_back(j < f.feature_names.size() ? f.feature_names[j] : "feature " + std::to_string(j));
  return out;
}

}  // namespace coinfer::models
