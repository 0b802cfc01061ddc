#include "sched/gin_predictor.hpp"

#include <torch/torch.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "core/input_error.hpp"
#include "core/random_stream.hpp"
#include "core/text_util.hpp"

namespace coinfer {

namespace {

using torch::Tensor;

// 1: the first relative head (two embeddings); 2: embeddings and their difference.
constexpr int kGinFileVersion = 2;

struct Batch {
  Tensor x, src, dst, graph, node_count, indegree;
  std::int64_t graphs = 0;
};

Batch make_batch(const std::vector<const GraphInput*>& gs, const FeatureNormalisation& norm, bool hint) {
  std::vector<float> x;
  std::vector<std::int64_t> src, dst, graph;
  std::int64_t offset = 0;
  for (size_t gi = 0; gi < gs.size(); ++gi) {
    const GraphInput& g = *gs[gi];
    const auto f = system_features(g.types, g.latency_ms, g.settings, g.hint_ms, norm, hint);
    x.insert(x.end(), f.begin(), f.end());
    for (const auto& [a, b] : g.edges) src.push_back(offset + a), dst.push_back(offset + b);
    for (size_t v = 0; v < g.types.size(); ++v) graph.push_back(static_cast<std::int64_t>(gi));
    offset += static_cast<std::int64_t>(g.types.size());
  }
  Batch b;
  b.graphs = static_cast<std::int64_t>(gs.size());
  b.x = torch::from_blob(x.data(), {offset, kSystemFeatureWidth}, torch::kFloat32).clone();
  auto i64 = [](std::vector<std::int64_t>& v) { return torch::from_blob(v.data(), {static_cast<std::int64_t>(v.size())}, torch::kInt64).clone(); };
  b.src = i64(src), b.dst = i64(dst), b.graph = i64(graph);
  b.node_count = torch::bincount(b.graph, {}, b.graphs).to(torch::kFloat32).clamp_min(1).unsqueeze(1);
  b.indegree = torch::bincount(b.dst, {}, offset).to(torch::kFloat32).clamp_min(1).unsqueeze(1);
  return b;
}

struct GinLayerImpl : torch::nn::Module {
  GinLayerImpl(int in, int hidden, std::string aggregation)
      : l1(register_module("l1", torch::nn::Linear(in, hidden))),
        l2(register_module("l2", torch::nn::Linear(hidden, hidden))),
        eps(register_parameter("eps", torch::zeros({1}))),
        aggregation_(std::move(aggregation)) {}
  Tensor forward(const Tensor& h, const Batch& b) {
    const Tensor msg = h.index_select(0, b.src);
    Tensor agg = torch::zeros({h.size(0), h.size(1)}, h.options());
    if (aggregation_ == "max") {
      agg = agg.scatter_reduce(0, b.dst.unsqueeze(1).expand_as(msg), msg, "amax", false);
    } else {
      agg = agg.index_add(0, b.dst, msg);
      if (aggregation_ == "mean") agg = agg / b.indegree;
    }
    return torch::relu(l2(torch::relu(l1((1 + eps) * h + agg))));
  }
  torch::nn::Linear l1, l2;
  Tensor eps;
  std::string aggregation_;
};
TORCH_MODULE(GinLayer);

// GIN layers, then global mean pooling: [graphs x hidden].
struct GinEncoderImpl : torch::nn::Module {
  GinEncoderImpl(const GinConfig& c) {
    for (int i = 0; i < c.layers; ++i)
      layers.push_back(register_module("gin" + std::to_string(i), GinLayer(i == 0 ? kSystemFeatureWidth : c.hidden, c.hidden, c.aggregation)));
  }
  Tensor forward(const Batch& b) {
    Tensor h = b.x;
    for (auto& l : layers) h = l->forward(h, b);
    return torch::zeros({b.graphs, h.size(1)}, h.options()).index_add(0, b.graph, h) / b.node_count;
  }
  std::vector<GinLayer> layers;
};
TORCH_MODULE(GinEncoder);

struct SystemNetImpl : torch::nn::Module {
  SystemNetImpl(const GinConfig& c)
      : enc(register_module("encoder", GinEncoder(c))),
        h1(register_module("head1", torch::nn::Linear(c.hidden, std::max(1, c.hidden / 2)))),
        h2(register_module("head2", torch::nn::Linear(std::max(1, c.hidden / 2), 1))) {}
  // log(throughput), clamped to a range that keeps exp() finite.
  Tensor forward(const Batch& b) { return h2(torch::relu(h1(enc(b)))).squeeze(1).clamp(-12, 14); }
  GinEncoder enc;
  torch::nn::Linear h1, h2;
};
TORCH_MODULE(SystemNet);

struct RelativeNetImpl : torch::nn::Module {
  RelativeNetImpl(const GinConfig& c)
      : ea(register_module("encoder_a", GinEncoder(c))),
        eb(register_module("encoder_b", GinEncoder(c))),
        h1(register_module("head1", torch::nn::Linear(3 * c.hidden, c.hidden))),
        h2(register_module("head2", torch::nn::Linear(c.hidden, 2))) {}
  // Logits of {a better, b better}, from both embeddings and their difference.
  Tensor forward(const Batch& a, const Batch& b) {
    const Tensor xa = ea(a), xb = eb(b);
    return h2(torch::relu(h1(torch::cat({xa, xb, xa - xb}, 1))));
  }
  GinEncoder ea, eb;
  torch::nn::Linear h1, h2;
};
TORCH_MODULE(RelativeNet);

const char* aggregation_check(const std::string& a) {
  return a == "add" || a == "mean" || a == "max" ? nullptr : "aggregation must be add, mean or max";
}

nlohmann::json meta_json(const GinMeta& m) {
  nlohmann::json v = {{"format", "coinfer-gin-predictor"},
                      {"version", kGinFileVersion},
                      {"layout", m.config.layout},
                      {"hidden", m.config.hidden},
                      {"layers", m.config.layers},
                      {"aggregation", m.config.aggregation},
                      {"normalisation", normalisation_name(m.config.normalisation)},
                      {"norm_a", m.norm.a},
                      {"norm_b", m.norm.b},
                      {"system", m.has_system},
                      {"relative", m.has_relative},
                      {"device_types", m.device_types},
                      {"models", m.models},
                      {"max_latency_ms", m.max_latency_ms},
                      {"max_hint_ms", m.max_hint_ms},
                      {"train_samples", m.train_samples},
                      {"validation_samples", m.validation_samples},
                      {"train_pairs", m.train_pairs},
                      {"validation",
                       {{"samples", m.validation.samples},
                        {"pairs", m.validation.pairs},
                        {"within_10", m.validation.within_10},
                        {"within_20", m.validation.within_20},
                        {"mape", m.validation.mape},
                        {"pairwise", m.validation.pairwise}}},
                      {"provenance", m.provenance}};
  return v;
}

FeatureNormalisation::Kind parse_norm(const std::string& s) {
  if (s == "log_minmax") return FeatureNormalisation::Kind::log_minmax;
  if (s == "minmax") return FeatureNormalisation::Kind::minmax;
  if (s == "zscore") return FeatureNormalisation::Kind::zscore;
  throw std::invalid_argument("unknown normalisation '" + s + "'");
}

std::vector<std::string> split_commas(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream ss(s);
  std::string item;
  while (std::getline(ss, item, ','))
    if (!item.empty()) out.push_back(item);
  return out;
}

// Restores parameters saved by snapshot().
std::vector<Tensor> snapshot(torch::nn::Module& m) {
  std::vector<Tensor> out;
  for (const auto& p : m.parameters()) out.push_back(p.detach().clone());
  return out;
}
void restore(torch::nn::Module& m, const std::vector<Tensor>& saved) {
  torch::NoGradGuard ng;
  auto ps = m.parameters();
  for (size_t i = 0; i < ps.size(); ++i) ps[i].copy_(saved[i]);
}

// Module::load replaces each parameter with the archive's tensor whatever its shape, so a file whose
// weights disagree with its meta would load and fail at the first forward pass: compare the shapes.
std::map<std::string, std::vector<std::int64_t>> parameter_shapes(torch::nn::Module& m) {
  std::map<std::string, std::vector<std::int64_t>> out;
  for (const auto& p : m.named_parameters()) out[p.key()] = p.value().sizes().vec();
  return out;
}

// On a plateau (half the patience without a better validation loss) the step size halves, again at
// every further half-patience until early stopping: without it the relative predictor's validation
// loss jumped between 0.08 and 0.27 from epoch to epoch.
void halve_learning_rate(torch::optim::Adam& opt) {
  for (auto& g : opt.param_groups()) {
    auto& options = static_cast<torch::optim::AdamOptions&>(g.options());
    options.lr(options.lr() / 2);
  }
}

// Early stopping on the validation loss, with the learning rate halved at every half-patience of
// epochs without a better loss.
class Plateau {
 public:
  explicit Plateau(int patience) : patience_(std::max(1, patience)) {}
  // True when `val_loss` is a new best (the caller snapshots its weights).
  bool improved(double val_loss, torch::optim::Adam& opt) {
    if (val_loss < best_ - 1e-9) {
      best_ = val_loss, since_best_ = 0;
      return true;
    }
    ++since_best_;
    if (since_best_ < patience_ && since_best_ % std::max(1, patience_ / 2) == 0) halve_learning_rate(opt);
    return false;
  }
  bool exhausted() const { return since_best_ >= patience_; }

 private:
  int patience_;
  double best_ = 1e300;
  int since_best_ = 0;
};

class ThreadsGuard {
 public:
  explicit ThreadsGuard(int threads) : before_(torch::get_num_threads()) { torch::set_num_threads(std::max(1, threads)); }
  ~ThreadsGuard() { torch::set_num_threads(before_); }

 private:
  int before_;
};

}  // namespace

std::vector<std::pair<size_t, size_t>> ranking_pairs(const std::vector<TrainingSample>& samples) {
  std::map<std::int64_t, std::vector<size_t>> by_system;
  for (size_t i = 0; i < samples.size(); ++i) by_system[samples[i].system].push_back(i);
  std::vector<std::pair<size_t, size_t>> out;
  for (const auto& [sys, idx] : by_system)
    for (size_t a = 0; a < idx.size(); ++a)
      for (size_t b = a + 1; b < idx.size(); ++b) {
        const double ta = samples[idx[a]].throughput_rps, tb = samples[idx[b]].throughput_rps;
        if (std::max(ta, tb) > 0 && std::abs(ta - tb) / std::max(ta, tb) > 0.01) out.emplace_back(idx[a], idx[b]);
      }
  return out;
}

PredictorAccuracy accuracy(const std::vector<TrainingSample>& samples, const std::vector<double>& predicted,
                           const std::vector<std::pair<size_t, size_t>>& pairs, const std::vector<double>& better) {
  PredictorAccuracy a;
  for (size_t i = 0; i < samples.size() && i < predicted.size(); ++i) {
    const double y = samples[i].throughput_rps;
    if (!(y > 0)) continue;
    const double rel = std::abs(predicted[i] - y) / y;
    ++a.samples;
    a.within_10 += rel <= 0.10;
    a.within_20 += rel <= 0.20;
    a.mape += rel;
  }
  if (a.samples > 0) a.within_10 /= a.samples, a.within_20 /= a.samples, a.mape /= a.samples;
  long long right = 0;
  for (size_t k = 0; k < pairs.size() && k < better.size(); ++k) {
    const bool first_better = samples[pairs[k].first].throughput_rps > samples[pairs[k].second].throughput_rps;
    right += (better[k] > 0.5) == first_better;
    ++a.pairs;
  }
  a.pairwise = a.pairs > 0 ? static_cast<double>(right) / static_cast<double>(a.pairs) : 0;
  return a;
}

struct GinPredictor::Impl {
  GinMeta meta;
  SystemNet system{nullptr};
  RelativeNet relative{nullptr};
  bool hint() const { return meta.config.layout == kFeatureLayoutHint; }
};

GinPredictor::GinPredictor() : impl_(std::make_unique<Impl>()) {}
GinPredictor::~GinPredictor() = default;
GinPredictor::GinPredictor(GinPredictor&&) noexcept = default;
GinPredictor& GinPredictor::operator=(GinPredictor&&) noexcept = default;
std::string GinPredictor::meta_json_text() const { return meta_json(impl_->meta).dump(); }

const GinMeta& GinPredictor::meta() const { return impl_->meta; }

GinPredictor GinPredictor::train(const std::vector<TrainingSample>& samples, const GinConfig& config, const GinTrainOptions& o,
                                 const std::string& provenance) {
  if (const char* e = aggregation_check(config.aggregation)) throw std::invalid_argument(e);
  if (config.layout != kFeatureLayoutPaper && config.layout != kFeatureLayoutHint)
    throw std::invalid_argument("unknown feature layout '" + config.layout + "'");
  if (config.hidden < 1 || config.layers < 1) throw std::invalid_argument("hidden and layers must be >= 1");
  if (samples.size() < 4) throw std::invalid_argument("at least 4 samples are needed to train (" + std::to_string(samples.size()) + " given)");
  ThreadsGuard threads(o.threads);
  torch::manual_seed(mix64(o.seed * 0x9E3779B97F4A7C15ULL + static_cast<std::uint64_t>(StreamPurpose::predictor_training)));
  GinPredictor p;
  Impl& im = *p.impl_;
  im.meta.config = config;
  im.meta.provenance = provenance;
  // The 70/30 split by sample.
  const Tensor perm = torch::randperm(static_cast<std::int64_t>(samples.size()), torch::kInt64);
  const size_t n_val = std::max<size_t>(1, static_cast<size_t>(std::round(o.validation_share * static_cast<double>(samples.size()))));
  std::vector<size_t> val_idx, train_idx;
  for (std::int64_t i = 0; i < perm.size(0); ++i)
    (static_cast<size_t>(i) < n_val ? val_idx : train_idx).push_back(static_cast<size_t>(perm[i].item<std::int64_t>()));
  std::sort(val_idx.begin(), val_idx.end());
  std::sort(train_idx.begin(), train_idx.end());
  std::vector<TrainingSample> train, val;
  for (size_t i : train_idx) train.push_back(samples[i]);
  for (size_t i : val_idx) val.push_back(samples[i]);
  // The regression fits log-throughput: schemes that completed nothing in their window (throughput 0)
  // have no log; they still rank (relative pairs).
  auto positive = [](const std::vector<TrainingSample>& v) {
    std::vector<size_t> idx;
    for (size_t i = 0; i < v.size(); ++i)
      if (v[i].throughput_rps > 0) idx.push_back(i);
    return idx;
  };
  const std::vector<size_t> train_pos = positive(train), val_pos = positive(val);
  im.meta.train_samples = static_cast<long long>(train.size());
  im.meta.validation_samples = static_cast<long long>(val.size());
  // Normalisation and training range from the training split.
  std::vector<double> lat;
  std::set<std::string> types, models;
  for (const auto& s : train) {
    lat.insert(lat.end(), s.graph.latency_ms.begin(), s.graph.latency_ms.end());
    if (im.hint() && s.graph.hint_ms > 0) lat.push_back(s.graph.hint_ms);
    im.meta.max_hint_ms = std::max(im.meta.max_hint_ms, s.graph.hint_ms);
    for (const auto& t : split_commas(s.device_types)) types.insert(t);
    for (const auto& m : split_commas(s.models)) models.insert(m);
  }
  for (double x : lat) im.meta.max_latency_ms = std::max(im.meta.max_latency_ms, x);
  im.meta.device_types.assign(types.begin(), types.end());
  im.meta.models.assign(models.begin(), models.end());
  im.meta.norm = FeatureNormalisation::fit(config.normalisation, lat);
  const bool hint = im.hint();
  auto graphs_of = [](const std::vector<TrainingSample>& v, const std::vector<size_t>& idx) {
    std::vector<const GraphInput*> out;
    for (size_t i : idx) out.push_back(&v[i].graph);
    return out;
  };
  auto targets_of = [](const std::vector<TrainingSample>& v, const std::vector<size_t>& idx) {
    std::vector<float> y;
    for (size_t i : idx) y.push_back(static_cast<float>(v[i].throughput_rps));
    return torch::from_blob(y.data(), {static_cast<std::int64_t>(y.size())}, torch::kFloat32).clone();
  };
  std::vector<size_t> all_val(val.size());
  for (size_t i = 0; i < val.size(); ++i) all_val[i] = i;

  if (o.system) {
    if (train_pos.empty() || val_pos.empty())
      throw std::invalid_argument("no samples with a positive throughput to fit in the training or validation split");
    im.meta.has_system = true;
    im.system = SystemNet(config);
    {  // start the head at the training set's mean log-throughput
      torch::NoGradGuard ng;
      double mean_log = 0;
      for (size_t i : train_pos) mean_log += std::log(train[i].throughput_rps);
      im.system->h2->bias.fill_(mean_log / static_cast<double>(train_pos.size()));
    }
    torch::optim::Adam opt(im.system->parameters(), torch::optim::AdamOptions(o.learning_rate));
    const Batch val_batch = make_batch(graphs_of(val, val_pos), im.meta.norm, hint);
    const Tensor val_y = targets_of(val, val_pos);
    Plateau plateau(o.patience);
    std::vector<Tensor> best_params = snapshot(*im.system);
    for (int epoch = 1; epoch <= o.epochs; ++epoch) {
      im.system->train();
      const Tensor order = torch::randperm(static_cast<std::int64_t>(train_pos.size()), torch::kInt64);
      double loss_sum = 0;
      std::int64_t seen = 0;
      for (std::int64_t start = 0; start < order.size(0); start += o.batch_size) {
        std::vector<size_t> idx;
        for (std::int64_t k = start; k < std::min<std::int64_t>(order.size(0), start + o.batch_size); ++k)
          idx.push_back(train_pos[static_cast<size_t>(order[k].item<std::int64_t>())]);
        const Batch b = make_batch(graphs_of(train, idx), im.meta.norm, hint);
        const Tensor y = targets_of(train, idx);
        const Tensor loss = (im.system->forward(b) - y.log()).abs().mean();  // L1 on log-throughput
        opt.zero_grad();
        loss.backward();
        opt.step();
        loss_sum += loss.item<double>() * static_cast<double>(idx.size());
        seen += static_cast<std::int64_t>(idx.size());
      }
      im.system->eval();
      double val_loss = 0;
      {
        torch::NoGradGuard ng;
        val_loss = (im.system->forward(val_batch) - val_y.log()).abs().mean().item<double>();
      }
      if (o.progress) o.progress("system", epoch, loss_sum / std::max<std::int64_t>(1, seen), val_loss);
      if (plateau.improved(val_loss, opt)) best_params = snapshot(*im.system);
      if (plateau.exhausted()) break;
    }
    restore(*im.system, best_params);
    im.system->eval();
  }

  std::vector<std::pair<size_t, size_t>> val_pairs = ranking_pairs(val);
  if (o.relative) {
    const auto train_pairs = ranking_pairs(train);
    im.meta.train_pairs = static_cast<long long>(train_pairs.size());
    if (train_pairs.empty() && !o.system) throw std::invalid_argument("no training pairs: the relative predictor needs several schemes per system");
    if (!train_pairs.empty()) {
      im.meta.has_relative = true;
      im.relative = RelativeNet(config);
      torch::optim::Adam opt(im.relative->parameters(), torch::optim::AdamOptions(o.learning_rate));
      // Validation pairs: a fixed subset of at most 4096, in both orders.
      std::vector<std::pair<size_t, size_t>> vp = val_pairs;
      if (vp.size() > 2048) vp.resize(2048);
      auto pair_loss = [&](const std::vector<TrainingSample>& v, const std::vector<std::pair<size_t, size_t>>& ps) {
        std::vector<const GraphInput*> a, b;
        std::vector<std::int64_t> label;
        for (const auto& [i, j] : ps) {
          a.push_back(&v[i].graph), b.push_back(&v[j].graph);
          label.push_back(v[i].throughput_rps > v[j].throughput_rps ? 0 : 1);
        }
        const Tensor y = torch::from_blob(label.data(), {static_cast<std::int64_t>(label.size())}, torch::kInt64).clone();
        return torch::nn::functional::cross_entropy(im.relative->forward(make_batch(a, im.meta.norm, hint), make_batch(b, im.meta.norm, hint)), y);
      };
      std::vector<std::pair<size_t, size_t>> vp_both;
      for (const auto& [i, j] : vp) vp_both.emplace_back(i, j), vp_both.emplace_back(j, i);
      Plateau plateau(o.patience);
      std::vector<Tensor> best_params = snapshot(*im.relative);
      const std::int64_t per_epoch = std::min<std::int64_t>(o.pairs_per_epoch, static_cast<std::int64_t>(2 * train_pairs.size()));
      for (int epoch = 1; epoch <= o.epochs; ++epoch) {
        im.relative->train();
        // Draw pairs (with a random order each) for this epoch.
        const Tensor pick = torch::randint(static_cast<std::int64_t>(train_pairs.size()), {per_epoch}, torch::kInt64);
        const Tensor flip = torch::randint(2, {per_epoch}, torch::kInt64);
        double loss_sum = 0;
        for (std::int64_t start = 0; start < per_epoch; start += o.batch_size) {
          std::vector<std::pair<size_t, size_t>> ps;
          for (std::int64_t k = start; k < std::min<std::int64_t>(per_epoch, start + o.batch_size); ++k) {
            auto pr = train_pairs[static_cast<size_t>(pick[k].item<std::int64_t>())];
            if (flip[k].item<std::int64_t>()) std::swap(pr.first, pr.second);
            ps.push_back(pr);
          }
          const Tensor loss = pair_loss(train, ps);
          opt.zero_grad();
          loss.backward();
          opt.step();
          loss_sum += loss.item<double>() * static_cast<double>(ps.size());
        }
        im.relative->eval();
        double val_loss = 0;
        if (!vp_both.empty()) {
          torch::NoGradGuard ng;
          val_loss = pair_loss(val, vp_both).item<double>();
        }
        if (o.progress) o.progress("relative", epoch, loss_sum / static_cast<double>(per_epoch), val_loss);
        if (vp_both.empty()) continue;
        if (plateau.improved(val_loss, opt)) best_params = snapshot(*im.relative);
        if (plateau.exhausted()) break;
      }
      restore(*im.relative, best_params);
      im.relative->eval();
    }
  }
  // Validation accuracy (the held-out 30 %).
  std::vector<double> pred(val.size(), 0);
  if (im.meta.has_system) pred = p.throughput(graphs_of(val, all_val));
  std::vector<double> better;
  if (im.meta.has_relative || im.meta.has_system) {
    std::vector<std::pair<const GraphInput*, const GraphInput*>> ps;
    for (const auto& [i, j] : val_pairs) ps.emplace_back(&val[i].graph, &val[j].graph);
    better = p.better_probability(ps);
  }
  im.meta.validation = accuracy(val, pred, val_pairs, better);
  return p;
}

std::vector<double> GinPredictor::throughput(const std::vector<const GraphInput*>& graphs) const {
  if (!impl_->meta.has_system) throw std::logic_error("this predictor file holds no system predictor");
  if (graphs.empty()) return {};
  torch::NoGradGuard ng;
  const Tensor y = impl_->system->forward(make_batch(graphs, impl_->meta.norm, impl_->hint())).exp().to(torch::kFloat64).contiguous();
  return std::vector<double>(y.data_ptr<double>(), y.data_ptr<double>() + y.numel());
}

std::vector<double> GinPredictor::better_probability(const std::vector<std::pair<const GraphInput*, const GraphInput*>>& pairs) const {
  if (pairs.empty()) return {};
  if (!impl_->meta.has_relative) {  // from the system predictor's two throughputs
    std::vector<const GraphInput*> gs;
    for (const auto& [a, b] : pairs) gs.push_back(a), gs.push_back(b);
    const auto t = throughput(gs);
    std::vector<double> out;
    for (size_t k = 0; k < pairs.size(); ++k) out.push_back(t[2 * k] > t[2 * k + 1] ? 1.0 : t[2 * k] < t[2 * k + 1] ? 0.0 : 0.5);
    return out;
  }
  torch::NoGradGuard ng;
  std::vector<const GraphInput*> a, b;
  for (const auto& [x, y] : pairs) a.push_back(x), b.push_back(y);
  const bool hint = impl_->hint();
  const Batch ba = make_batch(a, impl_->meta.norm, hint), bb = make_batch(b, impl_->meta.norm, hint);
  const Tensor ab = torch::softmax(impl_->relative->forward(ba, bb), 1).select(1, 0);
  const Tensor ba_p = torch::softmax(impl_->relative->forward(bb, ba), 1).select(1, 0);
  const Tensor p = ((ab + (1 - ba_p)) / 2).to(torch::kFloat64).contiguous();
  return std::vector<double>(p.data_ptr<double>(), p.data_ptr<double>() + p.numel());
}

std::vector<std::string> GinPredictor::range_warnings(const GraphInput& g, const std::vector<std::string>& device_types,
                                                      const std::vector<std::string>& models) const {
  const GinMeta& m = impl_->meta;
  std::vector<std::string> out;
  auto seen = [](const std::vector<std::string>& v, const std::string& x) { return std::find(v.begin(), v.end(), x) != v.end(); };
  for (const auto& t : device_types)
    if (!seen(m.device_types, t)) out.push_back("device type " + t + " was not in the training samples");
  for (const auto& x : models)
    if (!seen(m.models, x)) out.push_back("model " + x + " was not in the training samples");
  double top = 0;
  for (double x : g.latency_ms) top = std::max(top, x);
  if (m.max_latency_ms > 0 && top > m.max_latency_ms) {
    char buf[160];
    std::snprintf(buf, sizeof buf, "a node latency of %.1f ms is %.1fx the largest in training (%.1f ms)", top, top / m.max_latency_ms,
                  m.max_latency_ms);
    out.push_back(buf);
  }
  return out;
}

void GinPredictor::save(const std::string& path) const {
  torch::serialize::OutputArchive archive;
  archive.write("meta", c10::IValue(meta_json_text()));
  if (impl_->meta.has_system) {
    torch::serialize::OutputArchive sub;
    impl_->system->save(sub);
    archive.write("system", sub);
  }
  if (impl_->meta.has_relative) {
    torch::serialize::OutputArchive sub;
    impl_->relative->save(sub);
    archive.write("relative", sub);
  }
  const std::string tmp = path + ".tmp";
  archive.save_to(tmp);
  std::filesystem::rename(tmp, path);
}

std::vector<std::string> GinPredictor::trust_warnings() const {
  const GinMeta& m = meta();
  std::vector<std::string> w;
  if (!m.has_system) return w;  // ranking only: judged by its pairwise share, which plan and eval report
  auto pc = [](double share) { return format_percent(share); };
  if (m.validation.samples > 0 && m.validation.within_20 < 0.5)
    w.push_back("its throughput predictions were within 20 % on " + pc(m.validation.within_20) + " of " + std::to_string(m.validation.samples) +
                " held-out samples (MAPE " + pc(m.validation.mape) +
                "): do not trust its ranking; train on more samples (coinfer predictor samples --systems 1000) or use estimator: analytic");
  if (m.validation.samples < kGinTrustedValidationSamples)
    w.push_back("its accuracy was measured on " + std::to_string(m.validation.samples) + " held-out samples only (fewer than " +
                std::to_string(kGinTrustedValidationSamples) + "): train on more samples (coinfer predictor samples --systems 1000)");
  return w;
}

GinPredictor GinPredictor::load(const std::string& path) {
  auto bad = [&](const std::string& key, const std::string& what) { return InputError(SourceLocation{path, 0, 0}, key, what); };
  if (!std::filesystem::is_regular_file(path)) throw bad("", "no such predictor file");
  torch::serialize::InputArchive archive;
  try {
    archive.load_from(path);
  } catch (const std::exception& e) {
    throw bad("", "not a predictor file (cannot read it as a LibTorch archive)");
  }
  c10::IValue v;
  if (!archive.try_read("meta", v) || !v.isString()) throw bad("meta", "not a coinfer GIN predictor (no meta record)");
  GinPredictor p;
  GinMeta& m = p.impl_->meta;
  try {
    const auto j = nlohmann::json::parse(v.toStringRef());
    if (j.at("format") != "coinfer-gin-predictor") throw bad("format", "not a coinfer GIN predictor");
    if (j.at("version").get<int>() != kGinFileVersion)
      throw bad("version", "predictor file version " + j.at("version").dump() + " is not the one this coinfer reads (" +
                               std::to_string(kGinFileVersion) + "); train it again with this coinfer");
    m.config.layout = j.at("layout").get<std::string>();
    if (m.config.layout != kFeatureLayoutPaper && m.config.layout != kFeatureLayoutHint)
      throw bad("layout",
                "feature layout '" + m.config.layout + "' is not one this coinfer builds (" + kFeatureLayoutPaper + ", " + kFeatureLayoutHint + ")");
    m.config.hidden = j.at("hidden").get<int>();
    m.config.layers = j.at("layers").get<int>();
    m.config.aggregation = j.at("aggregation").get<std::string>();
    if (aggregation_check(m.config.aggregation) || m.config.hidden < 1 || m.config.hidden > 8192 || m.config.layers < 1 || m.config.layers > 16)
      throw bad("meta", "network sizes or aggregation out of range");
    try {
      m.config.normalisation = parse_norm(j.at("normalisation").get<std::string>());
    } catch (const std::invalid_argument& e) {
      throw bad("normalisation", e.what());
    }
    m.norm.kind = m.config.normalisation;
    m.norm.a = j.at("norm_a").get<double>(), m.norm.b = j.at("norm_b").get<double>();
    m.has_system = j.at("system").get<bool>(), m.has_relative = j.at("relative").get<bool>();
    m.device_types = j.at("device_types").get<std::vector<std::string>>();
    m.models = j.at("models").get<std::vector<std::string>>();
    m.max_latency_ms = j.at("max_latency_ms").get<double>(), m.max_hint_ms = j.at("max_hint_ms").get<double>();
    m.train_samples = j.at("train_samples").get<long long>(), m.validation_samples = j.at("validation_samples").get<long long>();
    m.train_pairs = j.at("train_pairs").get<long long>();
    const auto& va = j.at("validation");
    m.validation.samples = va.at("samples"), m.validation.pairs = va.at("pairs");
    m.validation.within_10 = va.at("within_10"), m.validation.within_20 = va.at("within_20");
    m.validation.mape = va.at("mape"), m.validation.pairwise = va.at("pairwise");
    m.provenance = j.at("provenance").get<std::string>();
  } catch (const InputError&) {
    throw;
  } catch (const std::exception& e) {
    throw bad("meta", std::string("corrupt meta record: ") + e.what());
  }
  if (!m.has_system && !m.has_relative) throw bad("meta", "the file holds neither predictor");
  try {
    // Each network's weights, checked against the shapes the meta record implies.
    auto load_net = [&](torch::nn::Module& net, const std::string& key, const std::string& name) {
      const auto shapes = parameter_shapes(net);
      torch::serialize::InputArchive sub;
      if (!archive.try_read(key, sub)) throw bad(key, "the " + name + " predictor's weights are missing");
      net.load(sub);
      if (parameter_shapes(net) != shapes) throw bad(key, "the " + name + " predictor's weights do not match the network its meta record describes");
      net.eval();
    };
    if (m.has_system) {
      p.impl_->system = SystemNet(m.config);
      load_net(*p.impl_->system, "system", "system");
    }
    if (m.has_relative) {
      p.impl_->relative = RelativeNet(m.config);
      load_net(*p.impl_->relative, "relative", "relative");
    }
  } catch (const InputError&) {
    throw;
  } catch (const std::exception& e) {
    throw bad("weights", "weights do not match the network the meta record describes");
  }
  return p;
}

}  // namespace coinfer
