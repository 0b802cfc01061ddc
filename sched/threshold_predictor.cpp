#include "sched/threshold_predictor.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>

#include "core/input_error.hpp"
#include "core/random_stream.hpp"

namespace coinfer {

ThresholdNetImpl::ThresholdNetImpl(int features, int width, int heads, int layers) {
  embed = register_module("embed", torch::nn::Linear(features, width));
  encoder = register_module("encoder", torch::nn::TransformerEncoder(torch::nn::TransformerEncoderOptions(
                                           torch::nn::TransformerEncoderLayerOptions(width, heads).dim_feedforward(2 * width).dropout(0.0), layers)));
  lstm = register_module("lstm", torch::nn::LSTM(torch::nn::LSTMOptions(width, width / 2).bidirectional(true)));
  head = register_module("head", torch::nn::Linear(width, 2));
}

torch::Tensor ThresholdNetImpl::forward(const torch::Tensor& x) {
  torch::Tensor z = encoder->forward(embed->forward(x));
  torch::Tensor h = std::get<0>(lstm->forward(z));
  return torch::sigmoid(head->forward(h));
}

namespace {

torch::Tensor stack_inputs(const std::vector<const ThresholdSequence*>& batch) {
  const int64_t T = static_cast<int64_t>(batch[0]->inputs.size()), B = static_cast<int64_t>(batch.size());
  const int64_t F = static_cast<int64_t>(batch[0]->inputs[0].size());
  torch::Tensor x = torch::empty({T, B, F});
  auto a = x.accessor<float, 3>();
  for (int64_t b = 0; b < B; ++b)
    for (int64_t t = 0; t < T; ++t)
      for (int64_t f = 0; f < F; ++f) a[t][b][f] = batch[static_cast<size_t>(b)]->inputs[static_cast<size_t>(t)][static_cast<size_t>(f)];
  return x;
}

torch::Tensor stack_targets(const std::vector<const ThresholdSequence*>& batch) {
  const int64_t T = static_cast<int64_t>(batch[0]->inputs.size()), B = static_cast<int64_t>(batch.size());
  torch::Tensor y = torch::empty({T, B, 2});
  auto a = y.accessor<float, 3>();
  for (int64_t b = 0; b < B; ++b)
    for (int64_t t = 0; t < T; ++t)
      for (int k = 0; k < 2; ++k) a[t][b][k] = batch[static_cast<size_t>(b)]->targets[static_cast<size_t>(t)][static_cast<size_t>(k)];
  return y;
}

std::vector<std::array<float, 2>> predict_scaled(ThresholdNet& net, const std::vector<std::vector<float>>& inputs) {
  torch::NoGradGuard g;
  ThresholdSequence s;
  s.inputs = inputs;
  const torch::Tensor y = net->forward(stack_inputs({&s})).contiguous();
  auto a = y.accessor<float, 3>();
  std::vector<std::array<float, 2>> out(inputs.size());
  for (size_t t = 0; t < inputs.size(); ++t) out[t] = {a[static_cast<int64_t>(t)][0][0], a[static_cast<int64_t>(t)][0][1]};
  return out;
}

ThresholdAccuracy accuracy_over(ThresholdNet& net, const std::vector<const ThresholdSequence*>& seqs) {
  std::vector<std::array<float, 2>> p, t;
  for (const auto* s : seqs) {
    const auto y = predict_scaled(net, s->inputs);
    p.insert(p.end(), y.begin(), y.end());
    t.insert(t.end(), s->targets.begin(), s->targets.end());
  }
  return threshold_accuracy(p, t);
}

}  // namespace

ThresholdAccuracy threshold_accuracy(const std::vector<std::array<float, 2>>& predicted, const std::vector<std::array<float, 2>>& truth) {
  ThresholdAccuracy a;
  a.operators = static_cast<int>(truth.size());
  if (truth.empty()) return a;
  int s_ok = 0, c_ok = 0;
  for (size_t i = 0; i < truth.size(); ++i) {
    const double ts = truth[i][0], ps = predicted[i][0];
    if (std::abs(ps - ts) <= std::max(0.1 * std::abs(ts), 0.01)) ++s_ok;
    const double tc = unscale_intensity(truth[i][1]), pc = unscale_intensity(predicted[i][1]);
    if (std::abs(pc - tc) <= 0.1 * std::abs(tc)) ++c_ok;
  }
  a.sparsity = static_cast<double>(s_ok) / truth.size();
  a.intensity = static_cast<double>(c_ok) / truth.size();
  return a;
}

ThresholdTrainResult train_threshold_predictor(const std::vector<ThresholdSequence>& data, const ThresholdTrainOptions& o, ThresholdNet& net) {
  if (data.size() < 2) throw std::invalid_argument("the threshold predictor needs at least two sequences (one to test)");
  for (const auto& s : data)
    if (s.inputs.empty() || s.inputs.size() != s.targets.size())
      throw std::invalid_argument("sequence '" + s.name + "': inputs and targets differ in length");
  // 80/20 split of the sequences, drawn with the stream (seed, predictor_training, 2).
  RandomStream rng(o.seed, StreamPurpose::predictor_training, 2);
  std::vector<size_t> order(data.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  for (size_t i = order.size(); i > 1; --i) std::swap(order[i - 1], order[rng.next_u64() % i]);
  const size_t n_test = std::max<size_t>(1, static_cast<size_t>(std::round(o.test_share * data.size())));
  // The validation sequences come after the test ones in the same order (none when validation_share is 0,
  // or when they would leave no sequence to train on).
  size_t n_val = o.validation_share > 0 ? std::max<size_t>(1, static_cast<size_t>(std::round(o.validation_share * data.size()))) : 0;
  if (n_test + n_val >= data.size()) n_val = 0;
  std::vector<const ThresholdSequence*> train, test, validation;
  for (size_t i = 0; i < order.size(); ++i) (i < n_test ? test : i < n_test + n_val ? validation : train).push_back(&data[order[i]]);
  if (train.empty()) throw std::invalid_argument("no sequence left to train on");
  ThresholdTrainResult r;
  r.train_sequences = static_cast<int>(train.size());
  r.test_sequences = static_cast<int>(test.size());
  r.validation_sequences = static_cast<int>(validation.size());
  std::vector<torch::Tensor> kept;  // the best validated state's parameters
  double kept_score = -1;
  const auto validate = [&](int epoch) {
    net->eval();
    const ThresholdAccuracy v = accuracy_over(net, validation);
    net->train();
    if (v.sparsity + v.intensity <= kept_score) return;  // ties: the earlier epoch stays
    kept_score = v.sparsity + v.intensity;
    r.validation = v;
    r.kept_epoch = epoch;
    torch::NoGradGuard g;
    kept.clear();
    for (const auto& p : net->parameters()) kept.push_back(p.detach().clone());
  };

  std::map<size_t, std::vector<const ThresholdSequence*>> by_length;
  for (const auto* s : train) by_length[s->inputs.size()].push_back(s);
  torch::optim::Adam opt(net->parameters(), torch::optim::AdamOptions(o.learning_rate));
  net->train();
  for (int epoch = 0; epoch < o.epochs; ++epoch) {
    std::vector<std::vector<const ThresholdSequence*>> batches;
    for (auto& [len, seqs] : by_length) {
      std::vector<const ThresholdSequence*> shuffled = seqs;
      for (size_t i = shuffled.size(); i > 1; --i) std::swap(shuffled[i - 1], shuffled[rng.next_u64() % i]);
      for (size_t b = 0; b < shuffled.size(); b += static_cast<size_t>(o.batch))
        batches.emplace_back(shuffled.begin() + static_cast<std::ptrdiff_t>(b),
                             shuffled.begin() + static_cast<std::ptrdiff_t>(std::min(shuffled.size(), b + static_cast<size_t>(o.batch))));
    }
    for (size_t i = batches.size(); i > 1; --i) std::swap(batches[i - 1], batches[rng.next_u64() % i]);
    double sum = 0;
    for (const auto& b : batches) {
      const torch::Tensor loss = torch::mse_loss(net->forward(stack_inputs(b)), stack_targets(b));
      opt.zero_grad();
      loss.backward();
      opt.step();
      sum += loss.item<double>();
    }
    r.final_loss = sum / std::max<size_t>(1, batches.size());
    if (!validation.empty() && ((epoch + 1) % std::max(1, o.validate_every) == 0 || epoch + 1 == o.epochs)) validate(epoch + 1);
  }
  if (!kept.empty()) {
    torch::NoGradGuard g;
    const auto params = net->parameters();
    for (size_t i = 0; i < params.size(); ++i) params[i].copy_(kept[i]);
  } else {
    r.kept_epoch = o.epochs;
  }
  net->eval();
  r.train = accuracy_over(net, train);
  r.test = accuracy_over(net, test);

  // Table 3's linear regression: least squares from the operator's inputs (and 1) to each scaled target.
  {
    std::vector<float> xs, ys;
    int rows = 0;
    const size_t F = data[0].inputs[0].size();
    for (const auto* s : train)
      for (size_t t = 0; t < s->inputs.size(); ++t, ++rows) {
        xs.insert(xs.end(), s->inputs[t].begin(), s->inputs[t].end());
        xs.push_back(1);
        ys.push_back(s->targets[t][0]);
        ys.push_back(s->targets[t][1]);
      }
    const torch::Tensor X = torch::from_blob(xs.data(), {rows, static_cast<int64_t>(F + 1)}).clone();
    const torch::Tensor Y = torch::from_blob(ys.data(), {rows, 2}).clone();
    const torch::Tensor W = torch::linalg_pinv(X).matmul(Y);
    std::vector<std::array<float, 2>> p, truth;
    for (const auto* s : test)
      for (size_t t = 0; t < s->inputs.size(); ++t) {
        std::vector<float> row = s->inputs[t];
        row.push_back(1);
        const torch::Tensor y = torch::from_blob(row.data(), {1, static_cast<int64_t>(F + 1)}).matmul(W).clamp(0, 1.2);
        p.push_back({y[0][0].item<float>(), y[0][1].item<float>()});
        truth.push_back(s->targets[t]);
      }
    r.linear_test = threshold_accuracy(p, truth);
  }
  return r;
}

std::vector<StageThresholds> predict_thresholds(ThresholdNet& net, const std::vector<std::vector<float>>& inputs) {
  std::vector<StageThresholds> out;
  for (const auto& y : predict_scaled(net, inputs)) {
    StageThresholds t;
    t.sparsity = std::clamp(static_cast<double>(y[0]), 0.0, 1.0);
    t.intensity = unscale_intensity(y[1]);
    out.push_back(t);
  }
  return out;
}

namespace {
nlohmann::ordered_json accuracy_json(const ThresholdAccuracy& a) {
  return {{"sparsity", a.sparsity}, {"intensity", a.intensity}, {"operators", a.operators}};
}
}  // namespace

void save_threshold_predictor(const std::string& path, const ThresholdPredictorInfo& info, const ThresholdNet& net) {
  const nlohmann::ordered_json meta{{"format", kThresholdPredictorFormat},
                                    {"input_names", info.input_names},
                                    {"device_type", info.device_type},
                                    {"provenance", info.provenance},
                                    {"train_sequences", info.result.train_sequences},
                                    {"test_sequences", info.result.test_sequences},
                                    {"accuracy_test", accuracy_json(info.result.test)},
                                    {"accuracy_train", accuracy_json(info.result.train)},
                                    {"linear_regression_test", accuracy_json(info.result.linear_test)}};
  torch::serialize::OutputArchive archive, sub;
  archive.write("meta", c10::IValue(meta.dump()));
  net->save(sub);
  archive.write("net", sub);
  const std::string tmp = path + ".tmp";
  archive.save_to(tmp);
  std::filesystem::rename(tmp, path);
}

ThresholdNet load_threshold_predictor(const std::string& path, ThresholdPredictorInfo* info) {
  const auto bad = [&path](const std::string& key, const std::string& what) { return InputError(SourceLocation{path, 0, 0}, key, what); };
  if (!std::filesystem::is_regular_file(path)) throw bad("", "no such threshold predictor file");
  torch::serialize::InputArchive archive;
  try {
    archive.load_from(path);
  } catch (const std::exception&) {
    throw bad("", std::string("not a ") + kThresholdPredictorFormat + " file (cannot read it as a LibTorch archive)");
  }
  c10::IValue v;
  if (!archive.try_read("meta", v) || !v.isString()) throw bad("meta", std::string("not a ") + kThresholdPredictorFormat + " file (no meta record)");
  ThresholdPredictorInfo i;
  try {
    const auto j = nlohmann::json::parse(v.toStringRef());
    if (j.value("format", std::string("?")) != kThresholdPredictorFormat)
      throw bad("format", "a " + j.value("format", std::string("?")) + " file, not a " + kThresholdPredictorFormat);
    i.input_names = j.at("input_names").get<std::vector<std::string>>();
    i.device_type = j.at("device_type").get<std::string>();
    i.provenance = j.at("provenance").get<std::string>();
    i.result.test.sparsity = j.at("accuracy_test").at("sparsity").get<double>();
    i.result.test.intensity = j.at("accuracy_test").at("intensity").get<double>();
  } catch (const InputError&) {
    throw;
  } catch (const std::exception& e) {
    throw bad("meta", std::string("corrupt meta record: ") + e.what());
  }
  if (i.input_names != threshold_input_names())
    throw bad("input_names",
              "the predictor reads " + std::to_string(i.input_names.size()) + " inputs of another layout; train it again with this coinfer");
  ThresholdNet net(static_cast<int>(i.input_names.size()));
  torch::serialize::InputArchive sub;
  if (!archive.try_read("net", sub)) throw bad("net", "the network's weights are missing");
  try {
    net->load(sub);
  } catch (const std::exception&) {
    throw bad("net", "the network's weights do not match the threshold predictor's layout");
  }
  net->eval();
  if (info) *info = i;
  return net;
}

}  // namespace coinfer
