#include "core/scenario_binding.hpp"

#include <algorithm>
#include <cmath>
#include <set>
#include <tuple>

#include "core/input_error.hpp"
#include "core/model_key.hpp"
#include "core/text_util.hpp"

namespace coinfer {

std::vector<LutNeed> lut_entries_needed(const Scenario& s, const ModelSource& models, const SchedulerTraits& scheduler) {
  std::vector<LutNeed> out;
  for_each_lut_need(s, models, scheduler, [&out](const LutNeed& need) { out.push_back(need); });
  return out;
}

void for_each_lut_need(const Scenario& s, const ModelSource& models, const SchedulerTraits& scheduler,
                       const std::function<void(const LutNeed&)>& visit) {
  // `out` is the visitor: each need is made, handed over and dropped.
  struct Visitor {
    const std::function<void(const LutNeed&)>& visit;
    void push_back(const LutNeed& need) const { visit(need); }
  } out{visit};
  const bool fixed = scheduler.keeps_scenario_strategies;
  for (size_t i = 0; i < s.devices.size(); ++i) {
    const DeviceSpec& d = s.devices[i];
    const int n = models.spec(d.model, d.dataset).num_stages();
    const ServerSpec& sv = s.servers[s.server_index(d.server)];
    std::vector<int> device_ends, server_begins;
    if (!fixed) {
      // An adaptive scheduler may choose any split: every range must be there.
      for (int k = 1; k <= n; ++k) device_ends.push_back(k);
      for (int k = 0; k < n; ++k) server_begins.push_back(k);
    } else
      switch (d.strategy.kind) {
        case Strategy::Kind::local:
          device_ends = {n};
          break;
        case Strategy::Kind::offload:
          server_begins = {0};
          break;
        case Strategy::Kind::pp:
          device_ends = {d.strategy.split};
          server_begins = {d.strategy.split};
          break;
        case Strategy::Kind::data_parallel:
          device_ends = {n};
          server_begins = {0};
          break;
      }
    if (!d.strategy.placement.empty() && fixed) {  // each part on its processor's table
      device_ends.clear();
      for (const PlacementPart& part : d.strategy.placement.resolved(d.strategy.placed_stages(n)))
        for (const std::string* on : {&part.processor, &part.with})
          if (!on->empty()) out.push_back({d.lut_key(d.model, *on), n, part.begin, part.end, 1, i, ""});
    }
    for (int k : device_ends)
      if (k > 0) out.push_back({d.lut_key(d.model), n, 0, k, 1, i, ""});
    for (int k : server_begins)
      for (int b = 1; b <= sv.batch.max_size; ++b) out.push_back({{sv.type, d.model, d.dataset}, n, k, n, b, i, "", true});
    // A cloud tier (servers[].cloud): the edge's [k,m) and the cloud's [m,n) of every pp(k,m) it may run.
    if (!sv.cloud.empty() && (!fixed || d.strategy.has_cloud_part())) {
      const ServerSpec& cloud = s.servers[static_cast<size_t>(s.server_index(sv.cloud))];
      std::vector<std::pair<int, int>> parts;  // (k, m)
      if (!fixed) {
        for (int k = 0; k < n; ++k)
          for (int m = k + 1; m < n; ++m) parts.push_back({k, m});
      } else {
        parts.push_back({d.strategy.split, d.strategy.cloud_split});
      }
      for (const auto& [k, m] : parts)
        for (int b = 1; b <= sv.batch.max_size; ++b) out.push_back({{sv.type, d.model, d.dataset}, n, k, m, b, i, "", true});
      std::set<int> cloud_begins;
      for (const auto& part : parts) cloud_begins.insert(part.second);
      for (int m : cloud_begins)
        for (int b = 1; b <= cloud.batch.max_size; ++b) out.push_back({{cloud.type, d.model, d.dataset}, n, m, n, b, i, "", true});
    }
    if (device_ends.empty()) out.push_back({d.lut_key(d.model), n, 0, n, 1, i, "", false, true});
    if (server_begins.empty()) out.push_back({{sv.type, d.model, d.dataset}, n, 0, n, 1, i, "", true, true});
  }
  // An idle device (arrival: none) may run the server part of any other device of its server, at the
  // batch sizes its table covers.
  for (size_t h = 0; h < s.devices.size(); ++h) {
    const DeviceSpec& hd = s.devices[h];
    if (hd.workload.arrival != WorkloadSpec::Arrival::none) continue;
    const ServerSpec& sv = s.servers[s.server_index(hd.server)];
    for (const DeviceSpec& d : s.devices) {
      if (d.server != hd.server || d.workload.arrival == WorkloadSpec::Arrival::none) continue;
      const int n = models.spec(d.model, d.dataset).num_stages();
      for (int k = 0; k < n; ++k)
        for (int b = 1; b <= sv.batch.max_size; ++b) out.push_back({hd.lut_key(d.model), n, k, n, b, h, d.id});
    }
  }
}

void check_scenario_binding(const Scenario& s, const ModelSource& models, const LutSet& luts, const SchedulerTraits& scheduler,
                            const DeviceProfileHint& profiles) {
  auto fail = [](const SourceLocation& w, const std::string& key, const std::string& what) { throw InputError(w, key, what); };
  for (size_t i = 0; i < s.devices.size(); ++i) {
    const DeviceSpec& d = s.devices[i];
    const std::string path = "devices (id " + d.id + ")";
    if (!models.has_model(d.model)) fail(d.where, path + ".model", "unknown model '" + d.model + "' (models: " + join(models.model_names()) + ")");
    const auto& ds = models.datasets_for(d.model);
    if (std::find(ds.begin(), ds.end(), d.dataset) == ds.end())
      fail(d.where, path + ".dataset", "unknown dataset '" + d.dataset + "' for model " + d.model + " (allowed: " + join(ds) + ")");
    if (d.model.find('@') != std::string::npos) {
      try {
        models.spec(d.model, d.dataset);
      } catch (const InputError& ex) {
        fail(d.where, path + ".variant", ex.what());
      }
    }
    const int n = models.spec(d.model, d.dataset).num_stages();
    if (d.strategy.kind == Strategy::Kind::pp && (d.strategy.split < 0 || d.strategy.split > n))
      fail(d.where, path + ".strategy",
           "split " + std::to_string(d.strategy.split) + " is outside 0.." + std::to_string(n) + " for model " + d.model);
    if (d.strategy.has_cloud_part() && d.strategy.cloud_split >= n)
      fail(d.where, path + ".strategy",
           "the cloud's part [" + std::to_string(d.strategy.cloud_split) + "," + std::to_string(n) + ") of " + d.strategy.to_string() +
               " is empty for model " + d.model + " (" + std::to_string(n) + " stages: pp(K,M) needs M < " + std::to_string(n) + ")");
    if (!d.strategy.placement.empty()) {
      try {
        d.strategy.placement.resolved(d.strategy.placed_stages(n));
      } catch (const std::invalid_argument& e) {
        fail(d.where, path + ".strategy", std::string(e.what()) + " (model " + d.model + " has " + std::to_string(n) + " stages)");
      }
    }
  }
  // Devices alike need the same entries: each distinct one is checked once (the first device that
  // needs an entry that fails is the one named).
  std::set<std::tuple<LutKey, int, int, int, int, bool, bool>> passed;
  for_each_lut_need(s, models, scheduler, [&](const LutNeed& need) {
    if (!passed.insert({need.key, need.num_stages, need.begin, need.end, need.batch, need.table_only, need.helper_for.empty()}).second) return;
    const DeviceSpec& d = s.devices[need.device];
    const std::string path = "devices (id " + d.id + ")";
    const std::string as = need.helper_for.empty() ? "" : "as a helper for " + need.helper_for + ": ";
    try {
      const LutTable& t = luts.table(need.key);
      if (t.num_stages() != need.num_stages)
        fail(d.where, path + ".model",
             as + "LUT " + need.key.to_string() + " has " + std::to_string(t.num_stages()) + " stages, the model spec " +
                 std::to_string(need.num_stages) + " (" + luts.origin(need.key) + ")");
      if (need.table_only) return;
      if (!need.helper_for.empty() && need.batch > t.max_batch()) return;  // helpers run what their table covers
      t.latency(need.begin, need.end, need.batch);
      if (s.luts_fill != Scenario::LutsFill::allow)
        if (const LutTable::Estimate* e = t.estimate(need.begin, need.end, need.batch))
          fail(s.luts_where, "luts_fill",
               as + "LUT " + need.key.to_string() + " (" + luts.origin(need.key) + ") entry [" + std::to_string(need.begin) + "," +
                   std::to_string(need.end) + ") at batch " + std::to_string(need.batch) + " is estimated (" + e->method + ", error " +
                   format_percent(e->relative_error) + "), not measured; set luts_fill: allow to use estimates");
    } catch (const LutMissingError& e) {
      // The ways to get the missing numbers (the error offered none).
      const LutKey& k = need.key;
      // lut synth needs the type's profile (traces/devices.yaml): offer it as is only where one exists
      // (the remedy offered for rpi5 itself failed).
      const std::string profiles_file = profiles.file ? profiles.file() : std::string("traces/devices.yaml");
      const bool profiled = profiles.has_profile && profiles.has_profile(k.device_type);
      const std::string synth = "coinfer lut synth --device " + k.device_type + (k.processor.empty() ? "" : " --processor " + k.processor);
      const std::string ways = "; to get it: measure it on that hardware (coinfer profile --model " + k.model + " --dataset " + k.dataset +
                               " --device-type " + k.device_type +
                               " --out FILE), estimate the missing entries from measured ones "
                               "(coinfer lut fill SCENARIO --out DIR, then luts_fill: allow), or synthesise a table (" +
                               (profiled ? synth
                                         : "first add a profile of " + k.device_type + " to " + profiles_file +
                                               " (its processors' peak figures, traces/README.md), then " + synth) +
                               ": a formula, NOT a measurement)";
      if (need.on_server) {  // the server's table: blame the server's type, or its batch size beyond the table
        const ServerSpec& sv = s.servers[s.server_index(d.server)];
        const bool beyond_batch = luts.contains(need.key) && need.batch > luts.table(need.key).max_batch();
        fail(sv.where, "servers (id " + sv.id + ")" + (beyond_batch ? ".batch.max_size" : ".type"),
             "for device " + d.id + ": " + e.what() + " (LUTs: " + join(s.luts) + ")" + ways);
      }
      // A processor named and not found, or tables of several processors and none named: the device's
      // processor key is what to change.
      const DeviceSpec& owner = s.devices[need.device];
      const bool about_processor = !owner.processor.empty() || std::string(e.what()).find("several processors") != std::string::npos;
      fail(owner.where, path + (about_processor ? ".processor" : ".type"), as + std::string(e.what()) + " (LUTs: " + join(s.luts) + ")" + ways);
    }
  });
}

std::vector<EstimatedUse> estimated_entries_used(const Scenario& s, const ModelSource& models, const LutSet& luts, const SchedulerTraits& scheduler) {
  std::set<std::tuple<LutKey, int, int, int>> seen;
  std::vector<EstimatedUse> out;
  for_each_lut_need(s, models, scheduler, [&](const LutNeed& need) {
    if (need.table_only || !luts.contains(need.key)) return;
    const LutTable& t = luts.table(need.key);
    const LutTable::Estimate* e = t.estimate(need.begin, need.end, need.batch);
    if (!e || !seen.insert({need.key, need.begin, need.end, need.batch}).second) return;
    out.push_back({need.key, need.begin, need.end, need.batch, e->method, e->relative_error});
  });
  return out;
}

ModelSpecs scenario_model_specs(const Scenario& s, const ModelSource& models) {
  ModelSpecs specs;
  for (const auto& d : s.devices) {
    std::vector<std::string> names = {d.model};
    for (const auto& choice : d.variant_choices) names.push_back(model_under(d.model, Strategy::local().with_variant(choice)));
    for (const auto& name : names) {
      const ModelKey key{name, d.dataset};
      if (!specs.count(key)) specs.emplace(key, models.spec(name, d.dataset));
    }
  }
  return specs;
}

}  // namespace coinfer

namespace coinfer {

double documented_output_error(const LutTable& t, const ModelVariant& v) {
  if (v.exact()) return 0;
  const auto& a = t.provenance().attributes;
  auto err = a.find("output_mean_abs_error"), scale = a.find("output_mean_abs");
  if (err == a.end() || scale == a.end()) return -1;
  try {
    const double e = std::stod(err->second), m = std::stod(scale->second);
    if (!(e >= 0) || !(m > 0) || !std::isfinite(e) || !std::isfinite(m)) return -1;
    return e / m;
  } catch (const std::exception&) {
    return -1;
  }
}

std::vector<std::string> resolve_variant_choices(Scenario& s, const ModelSource& models, const LutSet& luts) {
  std::vector<std::string> notes;
  if (s.scheduler.max_output_error < 0) return notes;
  const std::vector<LutKey> keys = luts.keys();
  std::set<std::string> noted;
  for (DeviceSpec& d : s.devices) {
    d.variant_choices.clear();
    const std::string base = split_variant_name(d.model).first;
    const int server = s.server_index(d.server);
    if (server < 0) continue;
    const ServerSpec& sv = s.servers[static_cast<size_t>(server)];
    std::set<std::string> choices;  // sorted: "fp32" < "int8" < ... ; deterministic
    for (const LutKey& k : keys) {
      if (k.device_type != d.type || k.dataset != d.dataset || split_variant_name(k.model).first != base) continue;
      if (!d.default_processor().empty() && !k.processor.empty() && k.processor != d.default_processor()) continue;  // another processor's table
      const LutKey server_key{sv.type, k.model, d.dataset};
      const std::string what = "variant " + k.model + " for " + d.type + "/" + d.dataset;
      auto note = [&](const std::string& why) {
        if (noted.insert(what + why).second) notes.push_back(what + ": not offered to the scheduler: " + why);
      };
      if (!luts.contains(server_key)) {
        note("no LUT for the server type " + sv.type);
        continue;
      }
      ModelVariant v;
      int n = 0;
      try {
        v = ModelVariant::parse(split_variant_name(k.model).second);
        n = models.spec(k.model, d.dataset).num_stages();
      } catch (const std::exception& e) {
        note(e.what());
        continue;
      }
      const LutTable& dev = luts.table(k);
      const LutTable& srv = luts.table(server_key);
      bool complete = dev.num_stages() == n && srv.num_stages() == n && srv.max_batch() >= sv.batch.max_size;
      for (int a = 0; a < n && complete; ++a)
        for (int b = a + 1; b <= n && complete; ++b) {
          if (a == 0) complete = dev.has_latency(0, b, 1);
          for (int batch = 1; batch <= sv.batch.max_size && complete && b == n; ++batch) complete = srv.has_latency(a, n, batch);
        }
      if (!complete) {
        note("its LUTs lack entries a strategy may need (device ranges [0,k) at batch 1, server ranges [k,n) at batch 1.." +
             std::to_string(sv.batch.max_size) + ")");
        continue;
      }
      if (s.luts_fill != Scenario::LutsFill::allow && (dev.estimated_entries() > 0 || srv.estimated_entries() > 0)) {
        note("its LUTs hold estimated entries and luts_fill is not allow");
        continue;
      }
      const double err = documented_output_error(dev, v);
      if (err < 0) {
        note("its LUT documents no output error (coinfer profile --variant records it; synthesised tables have none)");
        continue;
      }
      if (err > s.scheduler.max_output_error) {
        note("output error " + format_double(err) + " above max_output_error " + format_double(s.scheduler.max_output_error));
        continue;
      }
      choices.insert(v.is_default() ? "fp32" : v.name());
    }
    d.variant_choices.assign(choices.begin(), choices.end());
  }
  return notes;
}

}  // namespace coinfer
