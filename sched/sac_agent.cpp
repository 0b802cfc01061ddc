#include "sched/sac_agent.hpp"

#include <algorithm>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "core/input_error.hpp"
#include "core/random_stream.hpp"
#include "sched/policy_meta.hpp"

namespace coinfer {

namespace {

constexpr const char* kPolicyFormat = "coinfer-sac-policy";
constexpr const char* kCheckpointFormat = "coinfer-sac-checkpoint";

nlohmann::json info_json(const SacPolicyInfo& i, const char* format) {
  return {{"format", format},
          {"layout_version", i.layout_version},
          {"feature_names", i.feature_names},
          {"hidden", i.hidden},
          {"allow_data_parallel", i.allow_data_parallel},
          {"models", i.models},
          {"provenance", i.provenance},
          {"episodes", i.episodes},
          {"scenarios", i.scenarios},
          {"placement_policy", i.placement_policy},
          {"batching_policy", i.batching_policy}};
}

// The meta record of a policy or checkpoint, checked against this build's layout.
SacPolicyInfo read_info(torch::serialize::InputArchive& archive, const std::string& path, const char* format) {
  auto bad = [&](const std::string& key, const std::string& what) { return InputError(SourceLocation{path, 0, 0}, key, what); };
  c10::IValue v;
  if (!archive.try_read("meta", v) || !v.isString()) throw bad("meta", std::string("not a ") + format + " file (no meta record)");
  SacPolicyInfo i;
  try {
    const auto j = nlohmann::json::parse(v.toStringRef());
    if (j.at("format") != format) throw bad("format", "a " + j.at("format").get<std::string>() + " file, not a " + format);
    i.layout_version = j.at("layout_version").get<int>();
    i.feature_names = j.at("feature_names").get<std::vector<std::string>>();
    i.hidden = j.at("hidden").get<int>();
    i.allow_data_parallel = j.at("allow_data_parallel").get<bool>();
    i.models = j.at("models").get<std::vector<std::string>>();
    i.provenance = j.at("provenance").get<std::string>();
    i.episodes = j.value("episodes", -1);  // absent in policies made before it was recorded
    i.scenarios = j.value("scenarios", std::vector<std::string>{});
    i.placement_policy = j.value("placement_policy", std::string());  // absent: device-level (policies made before it)
    i.batching_policy = j.value("batching_policy", std::string());    // absent: no learned batching (policies made before it)
  } catch (const InputError&) {
    throw;
  } catch (const std::exception& e) {
    throw bad("meta", std::string("corrupt meta record: ") + e.what());
  }
  if (i.layout_version != kSacLayoutVersion || i.feature_names != sac_feature_names())
    throw bad("layout_version", "the policy observes state layout " + std::to_string(i.layout_version) + " (" +
                                    std::to_string(i.feature_names.size()) + " features), this coinfer builds layout " +
                                    std::to_string(kSacLayoutVersion) + " (" + std::to_string(sac_feature_count()) +
                                    " features); train it again with this coinfer");
  if (i.hidden < 1 || i.hidden > 8192) throw bad("hidden", "network width out of range");
  return i;
}

void load_archive(torch::serialize::InputArchive& archive, const std::string& path, const char* what) {
  if (!std::filesystem::is_regular_file(path)) throw InputError(SourceLocation{path, 0, 0}, "", std::string("no such ") + what + " file");
  try {
    archive.load_from(path);
  } catch (const std::exception&) {
    throw InputError(SourceLocation{path, 0, 0}, "", std::string("not a ") + what + " file (cannot read it as a LibTorch archive)");
  }
}

template <class Net>
void read_net(torch::serialize::InputArchive& archive, Net& net, const std::string& key, const std::string& path) {
  std::vector<std::vector<int64_t>> shapes;
  for (const auto& p : net->parameters()) shapes.push_back(p.sizes().vec());
  torch::serialize::InputArchive sub;
  if (!archive.try_read(key, sub)) throw InputError(SourceLocation{path, 0, 0}, key, "the " + key + " network's weights are missing");
  try {
    net->load(sub);
  } catch (const std::exception&) {
    throw InputError(SourceLocation{path, 0, 0}, key, "the " + key + " network's weights do not match the network the meta record describes");
  }
  std::vector<std::vector<int64_t>> after;
  for (const auto& p : net->parameters()) after.push_back(p.sizes().vec());
  if (after != shapes)
    throw InputError(SourceLocation{path, 0, 0}, key, "the " + key + " network's weights do not match the network the meta record describes");
}

template <class Net>
void write_net(torch::serialize::OutputArchive& archive, const Net& net, const std::string& key) {
  torch::serialize::OutputArchive sub;
  net->save(sub);
  archive.write(key, sub);
}

void save_atomically(torch::serialize::OutputArchive& archive, const std::string& path) {
  const std::string tmp = path + ".tmp";
  archive.save_to(tmp);
  std::filesystem::rename(tmp, path);
}

// y = tanh(u), u ~ N(mean, std); log pi(y) with the change-of-variables correction.
std::pair<torch::Tensor, torch::Tensor> sample_squashed(ActorNet& actor, const torch::Tensor& obs) {
  auto [mean, log_std] = actor->forward(obs);
  const torch::Tensor std = log_std.exp();
  const torch::Tensor u = mean + std * torch::randn_like(mean);
  const torch::Tensor y = torch::tanh(u);
  const torch::Tensor log_prob = (-0.5 * ((u - mean) / std).pow(2) - log_std - 0.5 * std::log(2 * M_PI)) - torch::log(1 - y.pow(2) + 1e-6);
  return {y, log_prob.sum(1, true)};
}

}  // namespace

ActorNetImpl::ActorNetImpl(int f, int h) {
  l1 = register_module("l1", torch::nn::Linear(f, h));
  l2 = register_module("l2", torch::nn::Linear(h, h));
  mean = register_module("mean", torch::nn::Linear(h, 1));
  log_std = register_module("log_std", torch::nn::Linear(h, 1));
}

std::pair<torch::Tensor, torch::Tensor> ActorNetImpl::forward(const torch::Tensor& obs) {
  torch::Tensor x = torch::relu(l2(torch::relu(l1(obs))));
  return {mean(x), torch::clamp(log_std(x), -20, 2)};
}

CriticNetImpl::CriticNetImpl(int f, int h) {
  l1 = register_module("l1", torch::nn::Linear(f + 1, h));
  l2 = register_module("l2", torch::nn::Linear(h, h));
  out = register_module("out", torch::nn::Linear(h, 1));
}

torch::Tensor CriticNetImpl::forward(const torch::Tensor& obs, const torch::Tensor& y) {
  return out(torch::relu(l2(torch::relu(l1(torch::cat({obs, y}, 1))))));
}

SacAgent::SacAgent(SacHyperParams h, std::uint64_t seed) : h_(h), seed_(seed), f_(h.features > 0 ? h.features : sac_feature_count()) {
  torch::manual_seed(static_cast<int64_t>(RandomStream(seed, StreamPurpose::sac_updates, ~0ULL).next_u64() >> 1));
  const int f = f_;
  actor_ = ActorNet(f, h.hidden);
  q1_ = CriticNet(f, h.hidden);
  q2_ = CriticNet(f, h.hidden);
  q1_target_ = CriticNet(f, h.hidden);
  q2_target_ = CriticNet(f, h.hidden);
  {
    torch::NoGradGuard g;
    auto copy = [](CriticNet& to, CriticNet& from) {
      auto a = to->parameters(), b = from->parameters();
      for (size_t i = 0; i < a.size(); ++i) a[i].copy_(b[i]);
    };
    copy(q1_target_, q1_);
    copy(q2_target_, q2_);
  }
  log_alpha_ = torch::full({1}, std::log(h.initial_alpha), torch::requires_grad());
  actor_opt_ = std::make_unique<torch::optim::Adam>(actor_->parameters(), torch::optim::AdamOptions(h.learning_rate));
  std::vector<torch::Tensor> qp = q1_->parameters();
  for (const auto& p : q2_->parameters()) qp.push_back(p);
  critic_opt_ = std::make_unique<torch::optim::Adam>(qp, torch::optim::AdamOptions(h.learning_rate));
  alpha_opt_ = std::make_unique<torch::optim::Adam>(std::vector<torch::Tensor>{log_alpha_}, torch::optim::AdamOptions(h.learning_rate));
}

double SacAgent::alpha() const { return log_alpha_.exp().item<double>(); }

void SacAgent::add(const SacTransition& t) {
  const size_t f = static_cast<size_t>(f_);
  if (t.obs.size() != f || t.next_obs.size() != f) throw std::invalid_argument("transition of the wrong width");
  if (size_ < static_cast<size_t>(h_.buffer_size)) {
    obs_.insert(obs_.end(), t.obs.begin(), t.obs.end());
    next_.insert(next_.end(), t.next_obs.begin(), t.next_obs.end());
    act_.push_back(2 * t.action - 1);
    rew_.push_back(t.reward);
    done_.push_back(t.done ? 1.0f : 0.0f);
    ++size_;
    head_ = size_ % static_cast<size_t>(h_.buffer_size);
    return;
  }
  std::copy(t.obs.begin(), t.obs.end(), obs_.begin() + static_cast<std::ptrdiff_t>(head_ * f));
  std::copy(t.next_obs.begin(), t.next_obs.end(), next_.begin() + static_cast<std::ptrdiff_t>(head_ * f));
  act_[head_] = 2 * t.action - 1;
  rew_[head_] = t.reward;
  done_[head_] = t.done ? 1.0f : 0.0f;
  head_ = (head_ + 1) % static_cast<size_t>(h_.buffer_size);
}

torch::Tensor SacAgent::rows(const std::vector<float>& v, int width, const std::vector<size_t>& idx) const {
  torch::Tensor out = torch::empty({static_cast<int64_t>(idx.size()), width});
  float* p = out.data_ptr<float>();
  for (size_t r = 0; r < idx.size(); ++r)
    std::copy(v.begin() + static_cast<std::ptrdiff_t>(idx[r] * width), v.begin() + static_cast<std::ptrdiff_t>((idx[r] + 1) * width), p + r * width);
  return out;
}

SacUpdateStats SacAgent::update(int steps, std::uint64_t round) {
  SacUpdateStats st;
  st.alpha = alpha();
  if (size_ < static_cast<size_t>(h_.batch_size)) return st;
  RandomStream pick(seed_, StreamPurpose::sac_updates, round);
  torch::manual_seed(static_cast<int64_t>(pick.next_u64() >> 1));
  std::vector<size_t> idx(static_cast<size_t>(h_.batch_size));
  const int f = f_;
  for (int s = 0; s < steps; ++s) {
    // Drawn by age (0 = oldest), then mapped to the ring's slot: a buffer reloaded in age order draws
    // the very same transitions.
    const size_t cap = static_cast<size_t>(h_.buffer_size);
    for (auto& i : idx) {
      const size_t age = static_cast<size_t>(pick.next_u64() % size_);
      i = size_ < cap ? age : (head_ + age) % cap;
    }
    const torch::Tensor o = rows(obs_, f, idx), a = rows(act_, 1, idx), r = rows(rew_, 1, idx), n = rows(next_, f, idx), d = rows(done_, 1, idx);
    const torch::Tensor alpha = log_alpha_.exp().detach();
    torch::Tensor target;
    {
      torch::NoGradGuard g;
      auto [yn, logp_n] = sample_squashed(actor_, n);
      const torch::Tensor qn = torch::min(q1_target_->forward(n, yn), q2_target_->forward(n, yn)) - alpha * logp_n;
      target = r + h_.gamma * (1 - d) * qn;
    }
    const torch::Tensor critic_loss = torch::mse_loss(q1_->forward(o, a), target) + torch::mse_loss(q2_->forward(o, a), target);
    critic_opt_->zero_grad();
    critic_loss.backward();
    critic_opt_->step();

    auto [y, logp] = sample_squashed(actor_, o);
    const torch::Tensor q = torch::min(q1_->forward(o, y), q2_->forward(o, y));
    const torch::Tensor actor_loss = (alpha * logp - q).mean();
    actor_opt_->zero_grad();
    actor_loss.backward();
    actor_opt_->step();

    const torch::Tensor alpha_loss = -(log_alpha_ * (logp.detach() + h_.target_entropy)).mean();
    alpha_opt_->zero_grad();
    alpha_loss.backward();
    alpha_opt_->step();

    {
      torch::NoGradGuard g;
      auto polyak = [&](CriticNet& to, CriticNet& from) {
        auto a = to->parameters(), b = from->parameters();
        for (size_t i = 0; i < a.size(); ++i) a[i].mul_(1 - h_.tau).add_(b[i], h_.tau);
      };
      polyak(q1_target_, q1_);
      polyak(q2_target_, q2_);
    }
    st.critic_loss = critic_loss.item<double>();
    st.actor_loss = actor_loss.item<double>();
    st.entropy = -logp.mean().item<double>();
  }
  st.alpha = alpha();
  return st;
}

void SacAgent::save_policy(const std::string& path, const SacPolicyInfo& info) const {
  torch::serialize::OutputArchive archive;
  archive.write("meta", c10::IValue(info_json(info, kPolicyFormat).dump()));
  write_net(archive, actor_, "actor");
  save_atomically(archive, path);
}

void SacAgent::save_checkpoint(const std::string& path, const SacPolicyInfo& info, const std::string& progress_json) const {
  torch::serialize::OutputArchive archive;
  archive.write("meta", c10::IValue(info_json(info, kCheckpointFormat).dump()));
  archive.write("progress", c10::IValue(progress_json));
  archive.write("seed", c10::IValue(std::to_string(seed_)));
  write_net(archive, actor_, "actor");
  write_net(archive, q1_, "q1");
  write_net(archive, q2_, "q2");
  write_net(archive, q1_target_, "q1_target");
  write_net(archive, q2_target_, "q2_target");
  archive.write("log_alpha", log_alpha_);
  for (auto [name, opt] : {std::pair<const char*, torch::optim::Adam*>{"actor_opt", actor_opt_.get()},
                           {"critic_opt", critic_opt_.get()},
                           {"alpha_opt", alpha_opt_.get()}}) {
    torch::serialize::OutputArchive sub;
    opt->save(sub);
    archive.write(name, sub);
  }
  // The buffer in insertion order (oldest first), so that it reloads into any capacity.
  std::vector<size_t> order;
  const size_t cap = static_cast<size_t>(h_.buffer_size);
  for (size_t k = 0; k < size_; ++k) order.push_back(size_ < cap ? k : (head_ + k) % cap);
  const int f = f_;
  archive.write("buffer_obs", rows(obs_, f, order));
  archive.write("buffer_act", rows(act_, 1, order));
  archive.write("buffer_rew", rows(rew_, 1, order));
  archive.write("buffer_next", rows(next_, f, order));
  archive.write("buffer_done", rows(done_, 1, order));
  save_atomically(archive, path);
}

std::string SacAgent::load_checkpoint(const std::string& path) {
  torch::serialize::InputArchive archive;
  load_archive(archive, path, kCheckpointFormat);
  const SacPolicyInfo info = read_info(archive, path, kCheckpointFormat);
  if (info.hidden != h_.hidden)
    throw InputError(SourceLocation{path, 0, 0}, "hidden",
                     "the checkpoint's networks are " + std::to_string(info.hidden) + " wide, not " + std::to_string(h_.hidden));
  if (info.allow_data_parallel != h_.allow_data_parallel)
    throw InputError(SourceLocation{path, 0, 0}, "allow_data_parallel", "the checkpoint's action mapping differs (data_parallel slot)");
  c10::IValue progress;
  if (!archive.try_read("progress", progress) || !progress.isString())
    throw InputError(SourceLocation{path, 0, 0}, "progress", "the checkpoint has no progress record");
  c10::IValue seed;
  if (!archive.try_read("seed", seed) || !seed.isString()) throw InputError(SourceLocation{path, 0, 0}, "seed", "the checkpoint has no seed");
  try {
    seed_ = std::stoull(seed.toStringRef());
  } catch (const std::exception&) {
    throw InputError(SourceLocation{path, 0, 0}, "seed", "the checkpoint's seed is not a number");
  }
  read_net(archive, actor_, "actor", path);
  read_net(archive, q1_, "q1", path);
  read_net(archive, q2_, "q2", path);
  read_net(archive, q1_target_, "q1_target", path);
  read_net(archive, q2_target_, "q2_target", path);
  torch::Tensor la;
  archive.read("log_alpha", la);
  {
    torch::NoGradGuard g;
    log_alpha_.copy_(la);
  }
  for (auto [name, opt] : {std::pair<const char*, torch::optim::Adam*>{"actor_opt", actor_opt_.get()},
                           {"critic_opt", critic_opt_.get()},
                           {"alpha_opt", alpha_opt_.get()}}) {
    torch::serialize::InputArchive sub;
    if (!archive.try_read(name, sub)) throw InputError(SourceLocation{path, 0, 0}, name, "missing optimiser state");
    opt->load(sub);
  }
  torch::Tensor o, a, r, n, d;
  archive.read("buffer_obs", o);
  archive.read("buffer_act", a);
  archive.read("buffer_rew", r);
  archive.read("buffer_next", n);
  archive.read("buffer_done", d);
  const int f = f_;
  if (o.dim() != 2 || o.size(1) != f || n.sizes() != o.sizes() || a.size(0) != o.size(0) || r.size(0) != o.size(0) || d.size(0) != o.size(0))
    throw InputError(SourceLocation{path, 0, 0}, "buffer", "the replay buffer's shapes do not match the layout");
  const int64_t count = std::min<int64_t>(o.size(0), h_.buffer_size);
  const int64_t from = o.size(0) - count;
  auto take = [&](const torch::Tensor& t, std::vector<float>& to) {
    const torch::Tensor c = t.narrow(0, from, count).contiguous().to(torch::kFloat);
    to.assign(c.data_ptr<float>(), c.data_ptr<float>() + c.numel());
  };
  take(o, obs_);
  take(n, next_);
  take(a, act_);
  take(r, rew_);
  take(d, done_);
  size_ = static_cast<size_t>(count);
  head_ = size_ % static_cast<size_t>(h_.buffer_size);
  return progress.toStringRef();
}

TorchSacActor::TorchSacActor(const std::string& path) : path_(path) {
  torch::serialize::InputArchive archive;
  load_archive(archive, path, kPolicyFormat);
  info_ = read_info(archive, path, kPolicyFormat);
  net_ = ActorNet(sac_feature_count(), info_.hidden);
  read_net(archive, net_, "actor", path);
  net_->eval();
}

void sac_actor_forward(ActorNet& net, const std::vector<std::vector<float>>& obs, std::vector<double>& mean, std::vector<double>& log_std) {
  torch::NoGradGuard g;
  const int64_t n = static_cast<int64_t>(obs.size()), f = net->l1->options.in_features();
  torch::Tensor x = torch::empty({n, f});
  auto acc = x.accessor<float, 2>();
  for (int64_t i = 0; i < n; ++i) {
    if (static_cast<int64_t>(obs[static_cast<size_t>(i)].size()) != f) throw std::invalid_argument("observation of the wrong size");
    for (int64_t k = 0; k < f; ++k) acc[i][k] = obs[static_cast<size_t>(i)][static_cast<size_t>(k)];
  }
  auto [m, s] = net->forward(x);
  m = m.contiguous();
  s = s.contiguous();
  mean.assign(m.data_ptr<float>(), m.data_ptr<float>() + n);
  log_std.assign(s.data_ptr<float>(), s.data_ptr<float>() + n);
}

void save_actor_file(const std::string& path, const std::string& format, const std::string& meta_json, const ActorNet& actor) {
  nlohmann::json meta = nlohmann::json::parse(meta_json);
  meta["format"] = format;
  torch::serialize::OutputArchive archive;
  archive.write("meta", c10::IValue(meta.dump()));
  write_net(archive, actor, "actor");
  save_atomically(archive, path);
}

std::string read_actor_meta(const std::string& path, const std::string& format) {
  torch::serialize::InputArchive archive;
  load_archive(archive, path, format.c_str());
  c10::IValue v;
  if (!archive.try_read("meta", v) || !v.isString())
    throw InputError(SourceLocation{path, 0, 0}, "meta", "not a " + format + " file (no meta record)");
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(v.toStringRef());
  } catch (const std::exception& e) {
    throw InputError(SourceLocation{path, 0, 0}, "meta", std::string("corrupt meta record: ") + e.what());
  }
  const std::string got = j.value("format", std::string("?"));
  if (got != format) throw InputError(SourceLocation{path, 0, 0}, "format", "a " + got + " file, not a " + format);
  return j.dump();
}

ActorNet read_actor_weights(const std::string& path, int features, int hidden) {
  torch::serialize::InputArchive archive;
  load_archive(archive, path, "policy");
  ActorNet net(features, hidden);
  read_net(archive, net, "actor", path);
  net->eval();
  return net;
}

std::vector<std::string> sac_trust_warnings(const std::string& path, const SacPolicyInfo& info, const std::string& scenario_name) {
  std::vector<std::string> w;
  if (info.episodes >= 0 && info.episodes < kSacTrustedEpisodes)
    w.push_back(path + " was trained for " + std::to_string(info.episodes) + " episode" + (info.episodes == 1 ? "" : "s") +
                " only (on Fig. 20 a policy needed " + std::to_string(kSacTrustedEpisodes) +
                " to match the best scheme, bench/RESULTS.md \"SAC\"): its decisions may be far from good; train longer "
                "(coinfer train sac --episodes 40) or compare with scheduler.name=greedy");
  if (!info.scenarios.empty() && std::find(info.scenarios.begin(), info.scenarios.end(), scenario_name) == info.scenarios.end()) {
    std::string trained;
    for (const auto& n : info.scenarios) trained += (trained.empty() ? "" : ", ") + n;
    w.push_back(path + " was trained on " + trained + ", not on '" + scenario_name +
                "': its decisions here are untested; compare with scheduler.name=greedy or hierarchical");
  }
  return w;
}

OnlineSacActor::OnlineSacActor(const std::string& policy_path, const SacPolicyInfo& info) : path_(policy_path), info_(info) {
  const std::string ckpt = policy_path + ".ckpt";
  if (!std::filesystem::is_regular_file(ckpt))
    throw InputError(SourceLocation{ckpt, 0, 0}, "scheduler.online",
                     "online learning needs the policy's training checkpoint, written beside it by coinfer train sac; it is missing");
  SacHyperParams h;
  h.hidden = info.hidden;
  h.allow_data_parallel = info.allow_data_parallel;
  agent_ = std::make_unique<SacAgent>(h, 1);
  agent_->load_checkpoint(ckpt);  // the seed, networks, optimisers and buffer of the training
}

void OnlineSacActor::forward(const std::vector<std::vector<float>>& obs, std::vector<double>& mean, std::vector<double>& log_std) const {
  sac_actor_forward(agent_->actor(), obs, mean, log_std);
}

void OnlineSacActor::learn(const std::vector<SacTransition>& transitions, int steps) {
  for (const auto& t : transitions) agent_->add(t);
  agent_->update(steps, round_++);
}

void TorchSacActor::forward(const std::vector<std::vector<float>>& obs, std::vector<double>& mean, std::vector<double>& log_std) const {
  sac_actor_forward(net_, obs, mean, log_std);
}

std::string sac_batching_policy_path(const std::string& policy_path, const SacPolicyInfo& info) {
  if (info.batching_policy.empty()) return "";
  return (std::filesystem::path(policy_path).parent_path() / info.batching_policy).string();
}

void save_sac_batching_policy(const std::string& path, const SacBatchingPolicyInfo& info, const ActorNet& actor) {
  save_actor_file(path, kSacBatchingPolicyFormat, sac_batching_info_to_json(info), actor);
}

TorchSacBatchingActor::TorchSacBatchingActor(const std::string& path) : path_(path) {
  const std::string meta = read_actor_meta(path, kSacBatchingPolicyFormat);
  try {
    info_ = sac_batching_info_from_json(meta);
  } catch (const std::invalid_argument& e) {
    throw policy_meta_error(path, e);
  }
  net_ = read_actor_weights(path, sac_batching_feature_count(), info_.hidden);
}

void TorchSacBatchingActor::forward(const std::vector<std::vector<float>>& obs, std::vector<double>& mean, std::vector<double>& log_std) const {
  sac_actor_forward(net_, obs, mean, log_std);
}

}  // namespace coinfer
