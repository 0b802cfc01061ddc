#include "sched/operator_placement.hpp"

#include <cmath>
#include <limits>
#include <stdexcept>

#include "core/device_plan.hpp"
#include "core/lut.hpp"
#include "core/model_spec.hpp"
#include "core/text_util.hpp"
#include "core/enum_names.hpp"

namespace coinfer {

namespace {

// One way to run a range of stages: on processor `proc` alone (with = -1), or split, `share` of each
// stage's output rows on `proc` and the rest on `with` at once.
struct Unit {
  int proc = 0, with = -1;
  double share = 1;
  bool operator==(const Unit& o) const { return proc == o.proc && with == o.with && share == o.share; }
};

int processor_of_kind(const DeviceHardware& hw, const std::vector<const LutTable*>& tables, const std::string& kind) {
  for (int p = 0; p < hw.size(); ++p)
    if (hw.kinds[static_cast<size_t>(p)] == kind && tables[static_cast<size_t>(p)] != nullptr) return p;
  return -1;
}

int cpu_of(const DeviceHardware& hw, const std::vector<const LutTable*>& tables) { return processor_of_kind(hw, tables, "cpu"); }

int accelerator_of(const DeviceHardware& hw, const std::vector<const LutTable*>& tables) {
  const int gpu = processor_of_kind(hw, tables, "gpu");
  return gpu >= 0 ? gpu : processor_of_kind(hw, tables, "npu");
}

int require(int p, const std::string& what, const DeviceHardware& hw) {
  if (p < 0)
    throw std::invalid_argument("the board has no " + what + " with a table of this model (it has: " + hw.describe() +
                                "; a processor's table: traces/README.md \"Processors\")");
  return p;
}

// Per-stage units as a Placement: consecutive stages on the same unit form one part.
Placement to_placement(const std::vector<Unit>& per_stage, const DeviceHardware& hw) {
  Placement pl;
  for (size_t s = 0; s < per_stage.size(); ++s) {
    const Unit& u = per_stage[s];
    if (!pl.parts.empty() && s > 0 && per_stage[s - 1] == u) {
      pl.parts.back().end = static_cast<int>(s) + 1;
      continue;
    }
    pl.parts.push_back(PlacementPart{hw.processors[static_cast<size_t>(u.proc)], u.with < 0 ? "" : hw.processors[static_cast<size_t>(u.with)],
                                     u.with < 0 ? 1 : u.share, static_cast<int>(s), static_cast<int>(s) + 1});
  }
  return pl;
}

Strategy strategy_over(const Placement& pl, int k, int n) {
  Strategy s = k >= n ? Strategy::local() : Strategy::pp(k);
  s.placement = pl;
  return s;
}

double stage_seconds(const ExecutionTimeModel& time, const std::vector<const LutTable*>& tables, int p, int s) {
  return time.seconds(*tables[static_cast<size_t>(p)], s, s + 1, 1);
}

double snap(double share, const std::vector<double>& grid) {
  double best = grid.front();
  for (double g : grid)
    if (std::abs(g - share) < std::abs(best - share)) best = g;
  return best;
}

}  // namespace

namespace {
constexpr auto kRuleNames = enum_names<PlacementRule>({"cpu_only", "accelerator_only", "greedy", "dp", "codl", "graphsplit"});
static_assert(kRuleNames.names_each_of(PlacementRule::cpu_only, PlacementRule::graphsplit));
}  // namespace

std::string rule_name(PlacementRule r) { return kRuleNames.name(r); }

std::vector<PlacementRule> all_placement_rules() {
  return {PlacementRule::cpu_only, PlacementRule::accelerator_only, PlacementRule::greedy, PlacementRule::dp,
          PlacementRule::codl,     PlacementRule::graphsplit};
}

PlacementRule parse_placement_rule(const std::string& name) {
  if (const auto r = kRuleNames.value(name)) return *r;
  throw std::invalid_argument("'" + printable(name, 80) + "' is not a placement rule (allowed: " + kRuleNames.listed() + ")");
}

const std::vector<double>& default_share_grid() {
  static const std::vector<double> grid = {0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9};
  return grid;
}

bool irregular_stage(const ModelSpec& model, int stage) {
  const std::string& op = model.stages.at(static_cast<size_t>(stage)).op;
  if (op == "knn" || op == "aggregate" || op == "pool" || op == "graph_prep") return true;  // graph_prep: GraphSplit's CPU preprocessing
  // Sparse message passing gathers and scatters along the graph's edges; StaGr's dense mask makes it a
  // dense matrix product (GraNNite runs it on the NPU).
  // So is a gcn stage given a graph_prep stage's matrix as an input.
  if (op == "gcn")
    for (int p : model.stages.at(static_cast<size_t>(stage)).inputs)
      if (p >= 0 && model.stages.at(static_cast<size_t>(p)).op == "graph_prep") return false;
  if (op == "gcn" || op == "gat" || op == "sage") return !model.variant.dense();
  return false;  // linear, fc, combine, edgeconv (its edge MLP dominates), dense-mask aggregation
}

double placement_seconds(const Placement& placement, const ModelSpec& model, int k, const DeviceHardware& hw,
                         const std::vector<const LutTable*>& tables, const ExecutionTimeModel& time) {
  if (k <= 0) return 0;
  const DevicePlan plan = make_device_plan(strategy_over(placement, k, model.num_stages()), model.num_stages(), hw, "board");
  if (!plan.invalid.empty()) throw std::invalid_argument(plan.invalid);
  double seconds = 0;
  for (size_t j = 0; j < plan.segments.size(); ++j) {
    for (int p : {plan.segments[j].proc, plan.segments[j].with})
      if (p >= 0 && tables.at(static_cast<size_t>(p)) == nullptr)
        throw std::invalid_argument("no table of this model for processor '" + hw.processors[static_cast<size_t>(p)] + "'");
    seconds += segment_seconds(plan, j, k, model, hw, tables, time, -1);
  }
  return seconds;
}

PlacementChoice place_stages(PlacementRule rule, const ModelSpec& model, int k, const DeviceHardware& hw, const std::vector<const LutTable*>& tables,
                             const ExecutionTimeModel& time, const std::vector<double>& share_grid) {
  if (tables.size() != static_cast<size_t>(hw.size())) throw std::invalid_argument("place_stages: one table per processor");
  if (share_grid.empty()) throw std::invalid_argument("place_stages: an empty share grid");
  PlacementChoice out;
  if (k <= 0) return out;
  std::vector<Unit> per_stage(static_cast<size_t>(k));
  switch (rule) {
    case PlacementRule::cpu_only:
    case PlacementRule::accelerator_only: {
      const int p = rule == PlacementRule::cpu_only ? require(cpu_of(hw, tables), "CPU", hw) : require(accelerator_of(hw, tables), "GPU or NPU", hw);
      for (auto& u : per_stage) u = Unit{p, -1, 1};
      break;
    }
    case PlacementRule::greedy:
      for (int s = 0; s < k; ++s) {
        int best = -1;
        for (int p = 0; p < hw.size(); ++p)
          if (tables[static_cast<size_t>(p)] && (best < 0 || stage_seconds(time, tables, p, s) < stage_seconds(time, tables, best, s))) best = p;
        per_stage[static_cast<size_t>(s)] = Unit{require(best, "processor", hw), -1, 1};
      }
      break;
    case PlacementRule::codl: {
      const int a = require(accelerator_of(hw, tables), "GPU or NPU", hw), c = require(cpu_of(hw, tables), "CPU", hw);
      for (int s = 0; s < k; ++s) {
        // Balanced: share x t_a = (1 - share) x t_c, i.e. share = t_c / (t_a + t_c) on the accelerator.
        const double ta = stage_seconds(time, tables, a, s), tc = stage_seconds(time, tables, c, s);
        per_stage[static_cast<size_t>(s)] = Unit{a, c, snap(tc / (ta + tc), share_grid)};
      }
      break;
    }
    case PlacementRule::graphsplit: {
      // GraNNite's dense side is the NPU; a board without one uses its GPU.
      const int npu = processor_of_kind(hw, tables, "npu");
      const int a = npu >= 0 ? npu : require(accelerator_of(hw, tables), "NPU or GPU", hw), c = require(cpu_of(hw, tables), "CPU", hw);
      for (int s = 0; s < k; ++s) per_stage[static_cast<size_t>(s)] = Unit{irregular_stage(model, s) ? c : a, -1, 1};
      break;
    }
    case PlacementRule::dp: {
      // Every unit: each processor with a table alone, each pair of them splitting at each share.
      std::vector<Unit> units;
      for (int p = 0; p < hw.size(); ++p)
        if (tables[static_cast<size_t>(p)]) units.push_back({p, -1, 1});
      for (int p = 0; p < hw.size(); ++p)
        for (int q = p + 1; q < hw.size(); ++q)
          if (tables[static_cast<size_t>(p)] && tables[static_cast<size_t>(q)])
            for (double sh : share_grid) units.push_back({p, q, sh});
      if (units.empty()) require(-1, "processor", hw);
      // best[e][u]: the least seconds of [0, e) whose last segment, ending at e, runs on unit u. A
      // segment's seconds depend only on its own unit, the previous segment's processors and whether it
      // is the last (core/device_plan.hpp): each is priced in a plan of those (a dummy segment after it
      // when it is not the last), so the program's total is exactly placement_seconds of its answer.
      const double inf = std::numeric_limits<double>::infinity();
      const size_t U = units.size();
      std::vector<std::vector<double>> best(static_cast<size_t>(k) + 1, std::vector<double>(U, inf));
      std::vector<std::vector<std::pair<int, int>>> from(static_cast<size_t>(k) + 1, std::vector<std::pair<int, int>>(U, {-1, -1}));
      const auto cost = [&](int s, int e, int u, int prev) {
        DevicePlan plan;
        if (prev >= 0)
          plan.segments.push_back(
              {s - 1, s, units[static_cast<size_t>(prev)].proc, units[static_cast<size_t>(prev)].with, units[static_cast<size_t>(prev)].share});
        const Unit& x = units[static_cast<size_t>(u)];
        plan.segments.push_back({s, e, x.proc, x.with, x.share});
        if (e < k) plan.segments.push_back({e, e + 1, x.proc, x.with, x.share});
        return segment_seconds(plan, prev >= 0 ? 1 : 0, k, model, hw, tables, time, -1);
      };
      for (int e = 1; e <= k; ++e)
        for (int s = 0; s < e; ++s)
          for (size_t u = 0; u < U; ++u) {
            if (s == 0) {
              const double c = cost(0, e, static_cast<int>(u), -1);
              if (c < best[static_cast<size_t>(e)][u]) best[static_cast<size_t>(e)][u] = c, from[static_cast<size_t>(e)][u] = {0, -1};
              continue;
            }
            for (size_t v = 0; v < U; ++v) {
              if (v == u || best[static_cast<size_t>(s)][v] == inf) continue;
              const double c = best[static_cast<size_t>(s)][v] + cost(s, e, static_cast<int>(u), static_cast<int>(v));
              if (c < best[static_cast<size_t>(e)][u])
                best[static_cast<size_t>(e)][u] = c, from[static_cast<size_t>(e)][u] = {s, static_cast<int>(v)};
            }
          }
      size_t u = 0;
      for (size_t x = 1; x < U; ++x)
        if (best[static_cast<size_t>(k)][x] < best[static_cast<size_t>(k)][u]) u = x;
      for (int e = k; e > 0;) {
        const auto [s, v] = from[static_cast<size_t>(e)][u];
        for (int st = s; st < e; ++st) per_stage[static_cast<size_t>(st)] = units[u];
        e = s;
        if (v >= 0) u = static_cast<size_t>(v);
      }
      break;
    }
  }
  out.placement = to_placement(per_stage, hw);
  out.device_seconds = placement_seconds(out.placement, model, k, hw, tables, time);
  return out;
}

}  // namespace coinfer
