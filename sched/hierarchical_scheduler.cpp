#include "sched/hierarchical_scheduler.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <unordered_map>

#include "sched/placement_scheduler.hpp"
#include "sched/scheme_search.hpp"

namespace coinfer {

namespace {
// hierarchical's groups: devices sharing one choice (type, model, dataset, server and link bandwidth when
// share_groups; else each device alone), in state order.
std::vector<std::vector<const DeviceState*>> choice_groups(const std::vector<const DeviceState*>& devs, bool share_groups) {
  std::vector<std::vector<const DeviceState*>> groups;
  std::map<std::string, size_t> group_of;
  for (const DeviceState* d : devs) {
    std::string key = d->id;
    if (share_groups) {
      char bw[32];
      std::snprintf(bw, sizeof bw, "%.3g", d->link_bandwidth_mbps);
      key = d->type + "|" + d->model + "/" + d->dataset + "|" + d->server + "|" + bw;
    }
    auto it = group_of.find(key);
    if (it == group_of.end()) {
      group_of[key] = groups.size();
      groups.push_back({d});
    } else {
      groups[it->second].push_back(d);
    }
  }
  return groups;
}
}  // namespace

double hierarchical_work(const AnalyticEstimator& est, const SystemState& state, bool share_groups, long long max_schemes) {
  // One state for the whole decision: a candidate re-solves the server of the group it changes (as many
  // units as that server has devices); stage 1's full ranking changes every group at once.
  const auto devs = searched_devices(state);
  std::unordered_map<std::string, double> at_server;
  for (const DeviceState* d : devs) at_server[d->server] += 1;
  long double combos = 1;
  double coarse = 0, fine = 0;
  for (const auto& g : choice_groups(devs, share_groups)) {
    const ServerState* sv = state.server(g[0]->server);
    const double coarse_options = sv && !sv->cloud.empty() ? 4.0 : 3.0;  // PP_cloud with a cloud
    const double options = coarse_options * static_cast<double>(std::max<size_t>(1, g[0]->variant_choices.size()));
    const double server_devices = at_server[g[0]->server];
    combos *= options;
    coarse += options * server_devices;
    fine += (stages_of(est, *g[0]) + 1) * server_devices;
  }
  const double stage1 = combos <= max_schemes ? static_cast<double>(combos) * static_cast<double>(devs.size()) : coarse;
  return stage1 + fine;
}

Scheme HierarchicalScheduler::decide(const SystemState& state) {
  const Estimator::StateHold hold(rank_, state);  // one state for the whole decision
  auto devs = searched_devices(state);
  // Groups of devices sharing one choice.
  const std::vector<std::vector<const DeviceState*>> groups = choice_groups(devs, share_groups_);
  // Candidate options per group: {DP, PP_comp, PP_comm} (deduplicated; with a cloud behind the group's
  // server also PP_cloud, pp_cloud_of), for each execution variant the
  // group's devices may run (DeviceState::variant_choices; none: the model as named), each also with
  // its board stages placed across the board's processors where it has several.
  std::vector<std::vector<Strategy>> options;
  long double combos = 1;
  for (const auto& g : groups) {
    const int n = stages_of(est_, *g[0]);
    std::vector<std::string> variants = g[0]->variant_choices;
    if (variants.empty()) variants = {""};
    std::vector<Strategy> o;
    for (const std::string& v : variants) {
      DeviceState dv = *g[0];  // PP_comp and PP_comm of this variant's spec and tables
      dv.strategy = dv.strategy.with_variant(v);
      auto as_strategy = [n, &v](int k) { return Strategy::at_split(k, n).with_variant(v); };
      std::vector<Strategy> coarse = {Strategy::data_parallel().with_variant(v), as_strategy(pp_comp_of(est_, state, dv)),
                                      as_strategy(pp_comm_of(est_, dv))};
      // A cloud behind the group's server: PP_comp over three tiers as a fourth.
      if (const auto cloud = pp_cloud_of(est_, state, dv)) coarse.push_back(cloud->with_variant(v));
      for (const Strategy& s : coarse)
        // Each as ACE-GNN has it and, on a board with several processors, with the stages the board runs
        // placed by the operator-placement DP (placement jointly with the split).
        for (const Strategy& c : {s, placed_strategy(est_, dv, s, PlacementRule::dp)})
          if (std::find(o.begin(), o.end(), c) == o.end()) o.push_back(c);
    }
    options.push_back(o);
    combos *= o.size();
  }
  auto scheme_of = [&](const std::vector<Strategy>& choice) {
    Scheme s;
    for (size_t gi = 0; gi < groups.size(); ++gi)
      for (const DeviceState* d : groups[gi]) s.strategies[d->id] = choice[gi];
    return s;
  };
  // Group gi's devices on strategy st, as an edit of a scheme (the candidates of a search: they differ
  // from the incumbent in one group).
  auto edit_of = [&](size_t gi, const Strategy& st) {
    SchemeEdit e;
    e.set.reserve(groups[gi].size());
    for (const DeviceState* d : groups[gi]) e.set.emplace_back(d->id, st);
    return e;
  };
  std::vector<Strategy> choice(groups.size());
  for (size_t gi = 0; gi < groups.size(); ++gi) choice[gi] = options[gi][0];
  Scheme best = scheme_of(choice);  // always scheme_of(choice)
  // The searches below edit `best` through the hold: the estimator keeps its figures between rounds.
  Estimator::BaseHold base_hold(rank_, best);
  // Stage 1: coarse-grained tuning.
  if (combos <= max_schemes_) {
    // Every combination, ranked in one round.
    std::vector<std::vector<Strategy>> combos_list;
    std::vector<Scheme> candidates;
    std::vector<size_t> idx(groups.size(), 0);
    while (true) {
      std::vector<Strategy> c(groups.size());
      for (size_t gi = 0; gi < groups.size(); ++gi) c[gi] = options[gi][idx[gi]];
      candidates.push_back(scheme_of(c));
      combos_list.push_back(c);
      size_t i = 0;
      while (i < groups.size() && ++idx[i] == options[i].size()) idx[i++] = 0;
      if (i == groups.size()) break;
    }
    const int k = rank_.best_of(state, best, candidates);
    if (k >= 0) {
      base_hold.replace(candidates[static_cast<size_t>(k)]);
      choice = combos_list[static_cast<size_t>(k)];
    }
  } else {
    // More combinations than the budget: coordinate rounds, each group in turn taking its best option
    // with the others fixed, until a round changes nothing (at most T + 1 rounds). The work grows with
    // groups x options x rounds, not with the product of the options.
    for (int round = 0; round <= iterations_; ++round) {
      bool changed = false;
      for (size_t gi = 0; gi < groups.size(); ++gi) {
        std::vector<SchemeEdit> candidates;
        std::vector<size_t> which;
        for (size_t oi = 0; oi < options[gi].size(); ++oi) {
          if (options[gi][oi] == choice[gi]) continue;
          candidates.push_back(edit_of(gi, options[gi][oi]));
          which.push_back(oi);
        }
        const int k = rank_.best_of_edits(state, best, SchemeEdit{}, candidates);
        if (k >= 0) {
          base_hold.apply(candidates[static_cast<size_t>(k)]);
          choice[gi] = options[gi][which[static_cast<size_t>(k)]];
          changed = true;
        }
      }
      if (!changed) break;
    }
  }
  // Stage 2: fine-grained tuning of PP splits: shift each PP group's split left and right while the
  // estimator predicts a gain. A group left on DP by stage 1 also tries PP again from its PP_comp and
  // PP_comm starting points, so a better split next to them (local = pp(n) included) is not missed
  // (the paper allows widening this stage "within the tolerable overhead").
  // A split keeps the variant of the strategy it starts from.
  auto split_strategy = [](int k, int n, const std::string& variant) { return Strategy::at_split(k, n).with_variant(variant); };
  for (int t = 0; t <= iterations_; ++t) {
    bool improved = false;
    for (size_t gi = 0; gi < groups.size(); ++gi) {
      const int n = stages_of(est_, *groups[gi][0]);
      std::vector<Strategy> starts;  // split strategies, each with its variant
      auto add_start = [&](const Strategy& s) {
        if (std::find(starts.begin(), starts.end(), s) == starts.end()) starts.push_back(s);
      };
      if (t > 0) {
        // A later pass (other groups moved in the one before): each PP group climbs again from where it
        // is; the widened starts were tried in the first pass.
        if (choice[gi].kind != Strategy::Kind::data_parallel) add_start(choice[gi]);
      } else if (choice[gi].kind == Strategy::Kind::data_parallel) {
        for (const Strategy& o : options[gi])
          if (o.kind != Strategy::Kind::data_parallel) add_start(o);
      } else {
        add_start(choice[gi]);
      }
      // The ends too (local = pp(n), offload = pp(0)): a climb from PP_comp or PP_comm stops at a local
      // optimum, and with objective latency local was out of reach behind one (a Nano on gcode at
      // 1 Mbit/s got data_parallel, 8.2 ms, with local rated 4.3 ms).
      if (t == 0) {
        for (const Strategy& s : std::vector<Strategy>(starts))
          for (int end : {n, 0}) add_start(split_strategy(end, n, s.variant));
        if (starts.empty())
          for (int end : {n, 0}) add_start(split_strategy(end, n, choice[gi].variant));
      }
      for (const Strategy& start : starts) {
        // Hill-climb from `start` with the other groups fixed: group gi's strategy as an edit of best.
        Strategy cur = start;
        SchemeEdit cur_edit = edit_of(gi, cur);
        while (true) {  // steepest ascent: the better of the two neighbours, one round each
          const int k = cur.device_split(n);
          std::vector<Strategy> steps;
          std::vector<SchemeEdit> candidates;
          for (int nk : {k - 1, k + 1}) {
            if (nk < 0 || nk > n) continue;
            steps.push_back(split_strategy(nk, n, cur.variant));
            candidates.push_back(edit_of(gi, steps.back()));
          }
          const int pick = rank_.best_of_edits(state, best, cur_edit, candidates);
          if (pick < 0) break;
          cur = steps[static_cast<size_t>(pick)];
          cur_edit = std::move(candidates[static_cast<size_t>(pick)]);
        }
        if (rank_.best_of_edits(state, best, SchemeEdit{}, {cur_edit}) == 0) {
          base_hold.apply(cur_edit);
          choice[gi] = cur;
          improved = true;
        }
      }
    }
    if (!improved) break;
  }
  if (use_helpers_) best.helpers = idle_helpers(state);
  return best;
}

}  // namespace coinfer
