#include "sched/sparoa_mdp.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <nlohmann/json.hpp>
#include <optional>
#include <stdexcept>

#include "core/device_plan.hpp"
#include "core/lut.hpp"
#include "core/model_spec.hpp"
#include "sched/policy_meta.hpp"

namespace coinfer {

const std::vector<std::string>& sparoa_feature_names() {
  static const std::vector<std::string> names = {"rho",   "rho_known", "intensity",        "n_in",       "n_out",
                                                 "m_gpu", "m_cpu",     "o_switch",         "prev_share", "position",
                                                 "s_hat", "c_hat",     "thresholds_known", "split_share"};
  return names;
}

int sparoa_feature_count() { return static_cast<int>(sparoa_feature_names().size()); }

namespace {

int processor_of_kind(const SparoaBoard& b, const std::string& kind) {
  for (int p = 0; p < b.hw->size(); ++p)
    if (b.hw->kinds[static_cast<size_t>(p)] == kind && b.tables[static_cast<size_t>(p)] != nullptr) return p;
  return -1;
}

bool same(const SparoaUnit& a, const SparoaUnit& b) { return a.proc == b.proc && a.with == b.with && a.share == b.share; }

}  // namespace

SparoaEnvironment::SparoaEnvironment(SparoaBoard board, SparoaRewardWeights w) : board_(std::move(board)), w_(w) {
  if (!board_.model || !board_.hw || !board_.time) throw std::invalid_argument("SparOA environment: no model or hardware");
  if (board_.k < 1 || board_.k > board_.model->num_stages())
    throw std::invalid_argument("SparOA places the stages a board computes: k must be in [1, " + std::to_string(board_.model->num_stages()) + "]");
  if (board_.tables.size() != static_cast<size_t>(board_.hw->size())) throw std::invalid_argument("SparOA environment: one table per processor");
  if (!board_.thresholds.empty() && board_.thresholds.size() < static_cast<size_t>(board_.k))
    throw std::invalid_argument("SparOA environment: thresholds for " + std::to_string(board_.thresholds.size()) + " stages, the board computes " +
                                std::to_string(board_.k));
  cpu_ = processor_of_kind(board_, "cpu");
  acc_ = processor_of_kind(board_, "gpu");
  if (acc_ < 0) acc_ = processor_of_kind(board_, "npu");
  if (cpu_ < 0 || acc_ < 0)
    throw std::invalid_argument("SparOA places stages between a CPU and a GPU (or NPU); the board has " + board_.hw->describe() +
                                " with tables of this model for " + std::string(cpu_ < 0 ? "no CPU" : "no GPU or NPU"));
  // The reference: the better of the two single-processor placements.
  double best = 0;
  for (int p : {cpu_, acc_}) {
    units_.assign(static_cast<size_t>(board_.k), SparoaUnit{p, -1, 1});
    const double s = prefix_seconds(board_.k, true);
    best = p == cpu_ ? s : std::min(best, s);
  }
  ref_s_ = best > 0 ? best : 1e-9;
  reset();
}

double SparoaEnvironment::action_share(double action) {
  if (!(action > 0)) return 0;  // NaN too: the CPU
  const double share = std::round(std::min(action, 1.0) * 100) / 100;
  if (share <= 0.05) return 0;
  if (share >= 0.95) return 1;
  return share;
}

SparoaUnit SparoaEnvironment::unit_of(double share) const {
  if (share <= 0) return {cpu_, -1, 1};
  if (share >= 1) return {acc_, -1, 1};
  return {acc_, cpu_, share};
}

void SparoaEnvironment::reset() {
  t_ = 0;
  units_.clear();
  d_prev_ = 0;
  cpu_busy_s_ = 0;
  last_latency_s_ = last_switch_s_ = 0;
}

double SparoaEnvironment::prefix_seconds(int j, bool final_step) const {
  if (j <= 0) return 0;
  DevicePlan plan;
  for (int s = 0; s < j; ++s) {
    const SparoaUnit& u = units_[static_cast<size_t>(s)];
    if (s > 0 && same(u, units_[static_cast<size_t>(s) - 1])) {
      plan.segments.back().end = s + 1;
      continue;
    }
    plan.segments.push_back({s, s + 1, u.proc, u.with, u.share});
  }
  // Not the last step: a stand-in segment after the prefix keeps its last segment from paying what only
  // the request's last segment pays (the copy back, the wire's compression); its own cost is not counted.
  const size_t real = plan.segments.size();
  if (!final_step) plan.segments.push_back({j, j + 1, cpu_, -1, 1});
  double seconds = 0;
  for (size_t s = 0; s < real; ++s) seconds += segment_seconds(plan, s, board_.k, *board_.model, *board_.hw, board_.tables, *board_.time, -1);
  return seconds;
}

double SparoaEnvironment::accelerator_memory_fraction() const {
  const auto& hw = *board_.hw;
  const double capacity = hw.pool_capacity_bytes.at(static_cast<size_t>(hw.pool_of.at(static_cast<size_t>(acc_))));
  if (capacity <= 0) return 0;
  double weights = 0, working = 0;
  for (size_t s = 0; s < units_.size(); ++s)
    if (units_[s].proc == acc_ || units_[s].with == acc_) {
      weights += board_.model->stages[s].weight_bytes;
      working = std::max(working, board_.model->stages[s].memory_bytes);
    }
  return (weights + working) / capacity;
}

std::vector<float> SparoaEnvironment::observe() const {
  std::vector<float> f(static_cast<size_t>(sparoa_feature_count()), 0.0f);
  if (done()) return f;
  const ModelSpec& m = *board_.model;
  const auto& st = m.stages[static_cast<size_t>(t_)];
  std::optional<double> rho;
  for (int p : {cpu_, acc_})
    if (!rho) rho = board_.tables[static_cast<size_t>(p)]->stage_output_sparsity(t_);
  const double in_bytes = m.bytes_at_split(t_);
  const double intensity = st.flops / std::max(1.0, in_bytes);
  f[0] = static_cast<float>(rho.value_or(0));
  f[1] = rho ? 1.0f : 0.0f;
  f[2] = static_cast<float>(std::log10(1 + intensity) / 4);
  f[3] = static_cast<float>(std::log10(1 + in_bytes) / 9);
  f[4] = static_cast<float>(std::log10(1 + st.out_bytes) / 9);
  f[5] = static_cast<float>(std::min(4.0, accelerator_memory_fraction()));
  f[6] = static_cast<float>(d_prev_ > 0 ? std::min(1.0, cpu_busy_s_ / d_prev_) : 0);
  f[7] = static_cast<float>(std::min(10.0, board_.hw->copy_seconds(in_bytes) / ref_s_));
  const SparoaUnit prev = t_ > 0 ? units_.back() : SparoaUnit{cpu_, -1, 1};
  f[8] = static_cast<float>(prev.proc == acc_ ? prev.share : 0);
  f[9] = static_cast<float>(static_cast<double>(t_) / board_.k);
  if (static_cast<size_t>(t_) < board_.thresholds.size()) {
    f[10] = static_cast<float>(board_.thresholds[static_cast<size_t>(t_)].sparsity);
    f[11] = static_cast<float>(scale_intensity(board_.thresholds[static_cast<size_t>(t_)].intensity));
    f[12] = 1;
  }
  f[13] = static_cast<float>(static_cast<double>(board_.k) / board_.model->num_stages());
  return f;
}

double SparoaEnvironment::step(double action) {
  if (done()) throw std::logic_error("SparOA episode already done");
  const SparoaUnit u = unit_of(action_share(action));
  const auto& hw = *board_.hw;
  // The switch paid at this step: moving the stage's input to other processors (or, at the first
  // step, out of main memory).
  const bool moved = t_ > 0 ? !same(u, units_.back())
                            : (hw.pool_of.at(static_cast<size_t>(u.proc)) != 0 || (u.with >= 0 && hw.pool_of.at(static_cast<size_t>(u.with)) != 0));
  last_switch_s_ = moved ? hw.copy_seconds(board_.model->bytes_at_split(t_)) : 0;
  units_.push_back(u);
  const double t_cpu = board_.time->seconds(*board_.tables[static_cast<size_t>(cpu_)], t_, t_ + 1, 1);
  cpu_busy_s_ += u.proc == cpu_ ? t_cpu : u.with == cpu_ ? (1 - u.share) * t_cpu : 0;
  ++t_;
  const double d = prefix_seconds(t_, done());
  last_latency_s_ = d - d_prev_;
  d_prev_ = d;
  const double m_gpu = accelerator_memory_fraction(), m_cpu = d_prev_ > 0 ? std::min(1.0, cpu_busy_s_ / d_prev_) : 0;
  return -(w_.latency * board_.k * last_latency_s_ / ref_s_ + w_.memory * (m_gpu + m_cpu) + w_.switching * last_switch_s_ / ref_s_);
}

Placement SparoaEnvironment::placement() const {
  Placement pl;
  const auto& hw = *board_.hw;
  for (size_t s = 0; s < units_.size(); ++s) {
    const SparoaUnit& u = units_[s];
    if (s > 0 && same(u, units_[s - 1])) {
      pl.parts.back().end = static_cast<int>(s) + 1;
      continue;
    }
    pl.parts.push_back(PlacementPart{hw.processors[static_cast<size_t>(u.proc)], u.with < 0 ? "" : hw.processors[static_cast<size_t>(u.with)],
                                     u.with < 0 ? 1 : u.share, static_cast<int>(s), static_cast<int>(s) + 1});
  }
  return pl;
}

Placement sparoa_rollout(SparoaEnvironment& env, const std::function<double(const std::vector<float>&)>& act, double* device_seconds) {
  env.reset();
  while (!env.done()) env.step(act(env.observe()));
  if (device_seconds) *device_seconds = env.device_seconds();
  return env.placement();
}

Placement sparoa_place(const SparoaActor& policy, const SparoaBoard& board, double* device_seconds) {
  SparoaBoard with = board;
  with.thresholds = policy.info().thresholds;
  SparoaEnvironment env(with);
  return sparoa_rollout(
      env, [&policy](const std::vector<float>& obs) { return policy.act(obs); }, device_seconds);
}

std::string sparoa_info_to_json(const SparoaPolicyInfo& i) {
  nlohmann::json thresholds = nlohmann::json::array();
  for (const auto& t : i.thresholds) thresholds.push_back({t.sparsity, t.intensity});
  return nlohmann::ordered_json{{"layout_version", i.layout_version},
                                {"feature_names", i.feature_names},
                                {"hidden", i.hidden},
                                {"device_type", i.device_type},
                                {"processors", i.processors},
                                {"model", i.model},
                                {"k", i.k},
                                {"episodes", i.episodes},
                                {"device_ms", i.device_ms},
                                {"placement", i.placement},
                                {"thresholds", thresholds},
                                {"thresholds_from", i.thresholds_from},
                                {"provenance", i.provenance}}
      .dump();
}

SparoaPolicyInfo sparoa_info_from_json(const std::string& text) {
  SparoaPolicyInfo i;
  const nlohmann::json j = parse_policy_meta(text);
  const auto get = [&j](const char* key, auto& into) { read_policy_meta(j, key, into); };
  get("layout_version", i.layout_version);
  get("feature_names", i.feature_names);
  get("hidden", i.hidden);
  get("device_type", i.device_type);
  get("processors", i.processors);
  get("model", i.model);
  get("k", i.k);
  get("episodes", i.episodes);
  get("device_ms", i.device_ms);
  get("placement", i.placement);
  get("provenance", i.provenance);
  std::vector<std::array<double, 2>> thresholds;
  get("thresholds", thresholds);
  for (const auto& t : thresholds) i.thresholds.push_back(StageThresholds{t[0], t[1], false});
  get("thresholds_from", i.thresholds_from);
  if (i.layout_version != kSparoaLayoutVersion || i.feature_names != sparoa_feature_names())
    throw std::invalid_argument("layout_version: the policy observes SparOA state layout " + std::to_string(i.layout_version) + " (" +
                                std::to_string(i.feature_names.size()) + " features), this coinfer builds layout " +
                                std::to_string(kSparoaLayoutVersion) + "; train it again with this coinfer");
  if (i.hidden < 1 || i.hidden > 8192) throw std::invalid_argument("hidden: network width out of range");
  if (i.k < 0) throw std::invalid_argument("k: must be 0 (any split) or the board's stage count");
  if (!i.thresholds.empty() && i.thresholds.size() < static_cast<size_t>(i.k))
    throw std::invalid_argument("thresholds: " + std::to_string(i.thresholds.size()) + " pairs for " + std::to_string(i.k) + " stages");
  return i;
}

}  // namespace coinfer
