#include "sim/simulation.hpp"

#include "core/device_plan.hpp"
#include "core/device_energy.hpp"

#include <simgrid/s4u.hpp>
#include <xbt/log.h>

#include <malloc.h>

#include <algorithm>
#include <optional>
#include <cctype>
#include <cstdlib>
#include <chrono>
#include <set>
#include <cmath>
#include <deque>
#include <fstream>
#include <map>

#include "core/input_error.hpp"
#include "core/text_util.hpp"
#include "core/log.hpp"
#include "core/helper_forwarding.hpp"
#include "core/run_assembly.hpp"
#include "io/scenario_loader.hpp"
#include "core/model_key.hpp"
#include "sched/scheduler_factory.hpp"
#include "sim/device.hpp"
#include "core/server_failures.hpp"
#include "sim/kernel_events.hpp"
#include "sim/platform_builder.hpp"
#include "sim/request_ledger.hpp"
#include "sim/scheduler_monitor.hpp"
#include "sim/server_actors.hpp"
#include "sim/simgrid_api.hpp"

namespace sg4 = simgrid::s4u;

namespace coinfer::sim {

namespace {

std::unique_ptr<AnalyticEstimator> make_estimator(const Scenario& s, const ModelCatalog& models, const LutSet& luts) {
  return coinfer::make_estimator(s, luts, scenario_model_specs(s, models));
}

// SimGrid checks some settings only when it builds its models, and then aborts the process: only keys
// whose values are checked here are passed on. Returns why a setting is refused, or "".
// The kernel's per-process bound on memory maps (vm.max_map_count), 65,530 when it cannot be read.
long long max_map_count() {
  std::ifstream in("/proc/sys/vm/max_map_count");
  long long n = 0;
  if (in >> n && n > 0) return n;
  return 65530;
}

std::string engine_setting_problem(const std::string& setting) {
  const auto colon = setting.find(':');
  if (colon == std::string::npos) return "expected KEY:VALUE, e.g. network/model:LV08";
  const std::string key = setting.substr(0, colon), value = setting.substr(colon + 1);
  // The Constant network model refuses links; a zero precision never converges; a zero bandwidth
  // factor aborts at the first transfer (all found by tests/golden/cli_bad_input.sh's search).
  const std::map<std::string, std::vector<std::string>> choices = {
    {"network/model", {"LV08", "CM02"}},
    {"cpu/model", {"Cas01"}},
#if COINFER_SIMGRID_4
    {"host/model", {"default"}},  // 4.0 has no "compound" host model
#else
    {"host/model", {"default", "compound"}},
#endif
    {"network/crosstraffic", {"0", "1", "yes", "no", "true", "false"}},
    {"contexts/guard-size", {"0", "1"}}
  };  // pages below each actor's stack (0: none; see max_map_count)
  struct Range {
    double lo, hi;
    bool lo_open;
  };
  const std::map<std::string, Range> numbers = {{"network/TCP-gamma", {0, 1e15, true}},       {"network/latency-factor", {0, 1e3, false}},
                                                {"network/bandwidth-factor", {0, 1e3, true}}, {"network/weight-S", {0, 1e9, false}},
                                                {"maxmin/precision", {1e-12, 1e-3, false}},   {"surf/precision", {1e-12, 1e-3, false}}};
  if (auto it = choices.find(key); it != choices.end()) {
    for (const auto& v : it->second)
      if (v == value) return "";
    return "value '" + value + "' is not one of: " + join(it->second);
  }
  if (auto it = numbers.find(key); it != numbers.end()) {
    const Range& r = it->second;
    char* end = nullptr;
    const double x = std::strtod(value.c_str(), &end);
    if (value.empty() || *end != '\0' || !std::isfinite(x) || x > r.hi || x < r.lo || (r.lo_open && x == r.lo))
      return "expected a number in " + std::string(r.lo_open ? "(" : "[") + format_double(r.lo) + ", " + format_double(r.hi) + "]";
    return "";
  }
  std::vector<std::string> keys;
  for (const auto& kv : choices) keys.push_back(kv.first);
  for (const auto& kv : numbers) keys.push_back(kv.first);
  return "not passed to SimGrid (keys it is safe to set: " + join(keys) + ")";
}

// SimGrid aborts the process on a malformed log setting, so only the threshold form is passed on.
bool valid_log_setting(const std::string& s) {
  const auto dot = s.rfind(".thresh:");
  if (dot == std::string::npos || dot == 0) return false;
  for (size_t i = 0; i < dot; ++i)
    if (!(std::isalnum(static_cast<unsigned char>(s[i])) || s[i] == '_' || s[i] == '.')) return false;
  const std::string level = s.substr(dot + 8);
  for (const char* l : {"trace", "debug", "verbose", "info", "warning", "error", "critical"})
    if (level == l) return true;
  return false;
}

// The server types device d's requests may reach: its own server's, and every other's where schemes
// may move it (scheduler.choose_servers, or a scheduler from outside, which may set servers in its
// answers). Types, not servers: a run of 1,000 servers of one type asks one table per device.
class ReachableServerTypes {
 public:
  explicit ReachableServerTypes(const Scenario& s)
      : s_(s), any_server_(s.scheduler.choose_servers || scheduler_traits(s.scheduler.name).from_outside) {
    std::set<std::string> types;
    for (const ServerSpec& sv : s.servers) types.insert(sv.type);
    all_.assign(types.begin(), types.end());
  }
  std::vector<std::string> of(const DeviceSpec& d) const {
    if (any_server_) return all_;
    const int j = s_.server_index(d.server);
    if (j < 0) return {};
    return {s_.servers[static_cast<size_t>(j)].type};
  }

 private:
  const Scenario& s_;
  bool any_server_;
  std::vector<std::string> all_;
};

}  // namespace

std::vector<LutKey> sampled_service_luts(const Scenario& s, const LutSet& luts) {
  std::set<LutKey> used;
  if (s.service_time != Scenario::ServiceTime::sampled) return {};
  const ReachableServerTypes reachable(s);
  std::map<std::string, std::set<std::pair<std::string, std::string>>> served;  // server id -> its devices' (model, dataset)
  for (const auto& o : s.devices) served[o.server].insert({o.model, o.dataset});
  for (const auto& d : s.devices) {
    used.insert(d.lut_key(d.model));
    for (const std::string& type : reachable.of(d)) used.insert({type, d.model, d.dataset});
    if (d.workload.arrival != WorkloadSpec::Arrival::none) continue;
    for (const auto& [model, dataset] : served[d.server])  // a helper may run any model of its server's devices
      used.insert({d.type, model, dataset, d.default_processor()});
  }
  std::vector<LutKey> out;
  for (const LutKey& k : used)
    if (luts.contains(k) && luts.table(k).has_distributions()) out.push_back(k);
  return out;
}

void validate_simulation(const Scenario& scenario, const ModelCatalog& models, const LutSet& luts) {
  check_scenario_against(scenario, models, luts, scheduler_traits(scenario.scheduler.name));
  Scenario s = scenario;
  resolve_variant_choices(s, models, luts);
  std::unique_ptr<AnalyticEstimator> estimator = make_estimator(s, models, luts);
  std::unique_ptr<Scheduler> scheduler = make_scheduler(s, *estimator);
  check_scheduler_size(s, *estimator, *scheduler, scenario_state(s, 0));
}

namespace {

// Phase: SimGrid's settings — the network model, stack guard pages against the kernel's map budget,
// then the user's --cfg and --log (so they win).
void configure_engine(const Scenario& s, const SimulationOptions& options) {
  xbt_log_control_set("root.thresh:warning");
  if (s.network_model == "cm02") {
    // Textbook L + S/B transfers (notes §0.1): no latency/bandwidth factors, no TCP window bound.
    sg4::Engine::set_config("network/model:CM02");
    sg4::Engine::set_config("network/crosstraffic:0");
    sg4::Engine::set_config("network/TCP-gamma:1e12");
  }
  // Each SimGrid actor's stack is two memory maps (stack and guard page) and the kernel's
  // vm.max_map_count (65,530 by default) then stops a run near 30,000 actors ("Failed to protect
  // stack"). The actors are the servers' (a dispatcher, a batch timer, a forwarder, the workers) plus a
  // few; past the map budget the guard pages go (a stack overflow is then not caught, none is expected:
  // the actors' stacks hold a few frames). A --cfg=contexts/guard-size given by the user wins.
  {
    long long actors = 8;
    for (const auto& sv : s.servers) actors += 3 + sv.workers;
    const long long maps = max_map_count();
    const bool user_set = std::any_of(options.engine_config.begin(), options.engine_config.end(),
                                      [](const std::string& c) { return c.rfind("contexts/guard-size:", 0) == 0; });
    const bool user_off =
        std::find(options.engine_config.begin(), options.engine_config.end(), "contexts/guard-size:0") != options.engine_config.end();
    // Without guard pages SimGrid takes each 8 MiB stack from calloc, and glibc's mmap threshold,
    // raised as the set-up freed large blocks, then served them from the heap, cleared: 1,000,000
    // devices' 50,000 actors took 13 s and 4.2 GB more. A fixed threshold keeps them mmap'd (pages
    // only when touched): 0.1 s at 300,000 devices instead of 3.6 s (bench/RESULTS.md "Third pass").
    if (user_off || (!user_set && 2 * actors + 10000 > maps)) mallopt(M_MMAP_THRESHOLD, 1 << 20);
    if (!user_set && 2 * actors + 10000 > maps) {
      sg4::Engine::set_config("contexts/guard-size:0");
      log::info("run", "up to " + std::to_string(actors) + " SimGrid actors against vm.max_map_count " + std::to_string(maps) +
                           ": their stacks' guard pages are off (--cfg=contexts/guard-size:1 keeps them)");
    }
  }
  for (const std::string& c : options.engine_config) {
    const std::string why = engine_setting_problem(c);
    if (!why.empty()) throw InputError(SourceLocation{"--cfg", 0, 0}, c, why);
    try {
      sg4::Engine::set_config(c);
    } catch (const std::exception& e) {
      const std::string what = e.what();
      throw InputError(SourceLocation{"--cfg", 0, 0}, c, "SimGrid refused this setting: " + what.substr(0, what.find('\n')));
    }
  }
  for (const std::string& l : options.engine_log) {
    if (!valid_log_setting(l))
      throw InputError(SourceLocation{"--log", 0, 0}, l,
                       "expected CATEGORY.thresh:LEVEL (LEVEL: trace, debug, verbose, info, warning, error, critical), e.g. root.thresh:info");
    xbt_log_control_set(l.c_str());
  }
}

// Each device's models — the one it names, then its variant choices — with their LUTs on the device
// and on its server, and the batch group of every split point (sim/device.hpp ModelBinding). Devices
// alike in everything a binding depends on (type, hardware, processor, model, dataset, variant
// choices, their server's type) share one list: bound and checked once per group.
struct DeviceBindings {
  std::deque<std::vector<ModelBinding>> distinct;    // stable addresses
  std::vector<const std::vector<ModelBinding>*> of;  // per device, binding order
};

// Phase: binding every device to its models and LUTs.
DeviceBindings bind_models(const Scenario& s, const ModelCatalog& models, const LutSet& luts, BatchGroupIds& groups) {
  const size_t nd = s.devices.size();
  DeviceBindings out;
  out.of.resize(nd);
  std::map<std::string, const std::vector<ModelBinding>*> bound;  // by what a binding depends on
  for (size_t i = 0; i < nd; ++i) {
    const DeviceSpec& d = s.devices[i];
    const int j = s.server_index(d.server);
    std::string key = d.type + '\n' + d.processor + '\n' + std::to_string(reinterpret_cast<std::uintptr_t>(d.hardware.get())) + '\n' + d.model +
                      '\n' + d.dataset + '\n' + s.servers[j].type;
    for (const auto& choice : d.variant_choices) key += '\n' + choice;
    if (const auto it = bound.find(key); it != bound.end()) {
      out.of[i] = it->second;
      continue;
    }
    std::vector<std::string> run_models = {d.model};
    for (const auto& choice : d.variant_choices) {
      const std::string m = model_under(d.model, Strategy::local().with_variant(choice));
      if (std::find(run_models.begin(), run_models.end(), m) == run_models.end()) run_models.push_back(m);
    }
    std::vector<ModelBinding>& list = out.distinct.emplace_back();
    for (const auto& m : run_models) {
      ModelBinding b;
      b.run_model = m;
      b.model = &models.spec(m, d.dataset);  // the catalog's, one per (model, dataset)
      // Both tables are bound whatever the strategy (a scheduler may move the split); a missing one is
      // blamed on the type that lacks it, at its line.
      try {
        b.lut = &luts.table(d.lut_key(m));
      } catch (const LutMissingError& e) {
        throw InputError(d.where, "devices (id " + d.id + ").type", std::string(e.what()) + " (LUTs: " + join(s.luts) + ")");
      }
      // Its other processors' tables, where the LUTs have them (a placement may use them).
      b.processor_luts = d.hardware ? processor_tables(luts, d.lut_key(m), b.lut, *d.hardware) : std::vector<const LutTable*>{b.lut};
      try {
        (void)luts.table({s.servers[j].type, m, d.dataset});  // its own server's is required
      } catch (const LutMissingError& e) {
        throw InputError(s.servers[j].where, "servers (id " + s.servers[j].id + ").type",
                         "for device " + d.id + ": " + e.what() + " (LUTs: " + join(s.luts) + ")");
      }
      const int n = b.model->num_stages();
      b.weight_prefix.push_back(0.0);
      for (int k = 0; k <= n; ++k) {
        b.batch_group.push_back(groups.id({{m, d.dataset}, k}));
        b.bytes_at_split.push_back(b.model->bytes_at_split(k));
        if (k == n) break;
        b.weight_prefix.push_back(b.weight_prefix.back() + b.model->stages[static_cast<size_t>(k)].weight_bytes);
        b.stage_working.push_back(b.model->stage_working_bytes(k));
      }
      list.push_back(std::move(b));
    }
    out.of[i] = bound[key] = &list;
  }
  return out;
}

// What every component of the run shares: the platform, the ledger, the models, where uploads arrive.
struct RunWiring {
  const Scenario* s;
  const LutSet* luts;
  const ExecutionTimeModel* time;
  Platform* platform;
  RequestLedger* ledger;
  DeviceBindings* bindings;
  std::vector<ArrivedUploads>* arrived;  // per server
  std::vector<DeviceInbox*>* inboxes;    // per device (filled once the devices exist)
  ActivityRetirement* retirement;
  std::vector<ServerStatus>* server_status;             // per server
  BatchGroupIds* groups;                                // the run's batch groups (pp(k,m)'s are made as requests need them)
  std::shared_ptr<const ServerLutIndex> server_tables;  // every server's table per device binding
  const std::vector<std::pair<int, int>>* helpers;      // (helper, origin): core/helper_forwarding.hpp
  TransferNetwork* transfers;                           // null: SimGrid carries the devices' transfers
};

// The models each device may run, binding order (what ServerTiming and ServerLutIndex take).
std::vector<std::vector<std::string>> run_models_of(const DeviceBindings& bindings) {
  std::vector<std::vector<std::string>> run_models;
  run_models.reserve(bindings.of.size());
  for (const auto* device : bindings.of) {
    run_models.emplace_back();
    for (const ModelBinding& b : *device) run_models.back().push_back(b.run_model);
  }
  return run_models;
}

// Phase: each server's timing (its LUTs and its helpers', core/server_timing.hpp) and its actors
// (dispatcher, timer, workers, forwarding to helpers).
std::vector<std::unique_ptr<ServerActors>> make_servers(const RunWiring& w, std::vector<std::unique_ptr<ServerTiming>>& timings) {
  const Scenario& s = *w.s;
  const std::vector<std::vector<std::string>> run_models = run_models_of(*w.bindings);
  std::vector<std::unique_ptr<ServerActors>> servers;
  for (size_t j = 0; j < s.servers.size(); ++j) {
    timings.push_back(std::make_unique<ServerTiming>(s, static_cast<int>(j), *w.luts, w.server_tables, *w.helpers, run_models, *w.time));
    ServerSlice x;
    x.scenario = &s;
    x.index = static_cast<int>(j);
    x.spec = &s.servers[j];
    x.host = w.platform->server_hosts[j];
    x.uploads = &(*w.arrived)[j];
    x.devices = w.inboxes;
    x.bandwidth = &w.platform->device_bandwidth;
    x.timing = timings.back().get();
    x.seed = s.seed;
    if (!s.servers[j].cloud.empty()) {
      x.cloud = s.server_index(s.servers[j].cloud);
      x.cloud_host = w.platform->server_hosts[static_cast<size_t>(x.cloud)];
      x.cloud_uploads = &(*w.arrived)[static_cast<size_t>(x.cloud)];
    }
    x.server_status = w.server_status;
    servers.push_back(std::make_unique<ServerActors>(std::move(x)));
  }
  return servers;
}

// Phase: the devices (each an event handler in the simulation's kernel, sim/device.hpp).
std::vector<std::unique_ptr<SimDevice>> make_devices(const RunWiring& w) {
  const Scenario& s = *w.s;
  std::vector<std::vector<int>> origins(s.devices.size());  // per helper: the devices it may help, in order
  for (const auto& [h, o] : *w.helpers) origins[static_cast<size_t>(h)].push_back(o);
  std::vector<std::unique_ptr<SimDevice>> devices;
  devices.reserve(s.devices.size());
  for (size_t i = 0; i < s.devices.size(); ++i) {
    const DeviceSpec& d = s.devices[i];
    const int j = s.server_index(d.server);
    DeviceSlice x;
    x.index = static_cast<int>(i);
    x.spec = &d;
    x.seed = s.seed;
    x.access_point = s.access_point;
    x.warmup_s = s.warmup_s;
    x.duration_s = s.duration_s;
    x.bindings = w.bindings->of[i];
    x.server_tables = w.server_tables.get();
    for (const int o : origins[i]) {
      const auto& bindings = *w.bindings->of[o];
      for (size_t b = 0; b < bindings.size(); ++b) {
        const LutKey key{d.type, bindings[b].run_model, s.devices[o].dataset, d.default_processor()};
        if (b == 0 || w.luts->contains(key)) x.helper_luts[{o, static_cast<int>(b)}] = &w.luts->table(key);
      }
    }
    x.bandwidth = &w.platform->device_bandwidth[i];
    x.load = LoadSchedule(d, s.events);
    x.ledger = w.ledger;
    x.server_index = j;
    x.uploads = w.arrived;
    x.platform = w.platform;
    x.server_status = w.server_status;
    x.peers = w.inboxes;
    x.retirement = w.retirement;
    x.transfers = w.transfers;
    x.time = w.time;
    x.handovers = handovers_of(s, d.id);
    x.mid_transfer = s.mobility.mid_transfer;
    x.groups = w.groups;
    devices.push_back(std::make_unique<SimDevice>(std::move(x)));
    (*w.inboxes)[i] = devices.back().get();
  }
  return devices;
}

// Where a finished request goes, during the run (the ledger's hand-over) and after it (the drain): into
// the summaries (RequestDigest), then either kept for RunResults::requests or, streamed
// (SimulationOptions::stream_requests), handed on in blocks of at most kBlock records. Owns the block
// being filled; the digest and the held list (null when streamed) are the run's.
class RecordOutlet {
 public:
  using Stream = std::function<void(std::vector<RequestRecord>&)>;
  static constexpr std::size_t kBlock = 4096;  // records a block holds after the engine ends

  RecordOutlet(RequestDigest& digest, const Stream& stream, std::vector<RequestRecord>* held)
      : digest_(digest), stream_(stream), to_(stream || !held ? block_ : *held) {}
  RecordOutlet(const RecordOutlet&) = delete;
  RecordOutlet& operator=(const RecordOutlet&) = delete;

  bool streamed() const { return static_cast<bool>(stream_); }
  void take(RequestRecord&& rec) {
    digest_.add(rec);
    to_.push_back(std::move(rec));
    if (streamed() && block_.size() >= kBlock) flush();
  }
  void flush() {  // hands the block on (streamed only)
    if (!streamed() || block_.empty()) return;
    stream_(block_);
    block_.clear();
  }

 private:
  RequestDigest& digest_;
  const Stream& stream_;
  std::vector<RequestRecord> block_;
  std::vector<RequestRecord>& to_;
};

// Phase: the run's results — every request (those unfinished at the drain's end failed), each device's
// energy and bytes, events, bandwidth samples, final strategies and the summary; the rules the merge of
// a real run's journals uses too (core/run_assembly.hpp).
RunResults assemble_results(const Scenario& s, const ModelCatalog& models, const LutSet& luts, RequestLedger& ledger, RequestDigest& digest,
                            const RecordOutlet::Stream& stream, const std::vector<std::unique_ptr<SimDevice>>& devices,
                            std::vector<DecisionRecord> decisions, double end_s, double engine_wall_s) {
  const size_t nd = s.devices.size();
  RunResults out = run_results_of(s);
  out.end_s = end_s;
  out.engine_wall_s = engine_wall_s;
  out.decisions = std::move(decisions);
  out.estimator = estimator_of(s);
  out.service_time = s.service_time == Scenario::ServiceTime::sampled ? "sampled" : "mean";
  for (const LutKey& k : sampled_service_luts(s, luts)) out.sampled_luts.push_back(k.to_string());
  for (const EstimatedUse& e : estimated_entries_used(s, models, luts, scheduler_traits(s.scheduler.name)))
    out.estimated_lut_entries.push_back(e.key.to_string() + " [" + std::to_string(e.begin) + "," + std::to_string(e.end) + ") batch " +
                                        std::to_string(e.batch) + ": " + e.method + ", error " + format_percent(e.relative_error));
  {
    std::set<LutKey> senders;  // devices send uploads, servers send results
    const ReachableServerTypes reachable(s);
    for (const auto& d : s.devices) {
      senders.insert(d.lut_key(d.model));
      for (const std::string& type : reachable.of(d)) {
        const LutKey k{type, d.model, d.dataset};
        if (luts.contains(k)) senders.insert(k);
      }
    }
    for (const LutKey& k : senders) (luts.table(k).has_wire_bytes() ? out.wire_bytes_luts : out.tensor_bytes_luts).push_back(k.to_string());
  }
  // Moved out of the ledger in id order, its memory freed as it goes (the engine has ended; nothing
  // reads the ledger's requests from here on): a run holds each request once, not twice, while it is
  // assembled.
  // Streamed (options.stream_requests): those not handed over during the run go the same way, in
  // blocks.
  RecordOutlet outlet(digest, stream, &out.requests);
  if (!outlet.streamed()) out.requests.reserve(ledger.size() - ledger.released());
  ledger.drain([&](SimRequest& r) {
    if (!r.finished) {
      r.rec.status = RequestRecord::Status::failed;
      r.rec.failure = drain_failure_text(r.rec, s.drain_s);
    }
    outlet.take(std::move(r.rec));
  });
  outlet.flush();
  std::vector<double> window_energy;
  out.devices.reserve(nd);  // grown one by one, the list's doublings left up to half of it unused at the run's peak
  window_energy.reserve(nd);
  for (size_t i = 0; i < nd; ++i) {
    const DeviceSpec& d = s.devices[i];
    DeviceResult dr = device_result_of(d);
    // SimGrid's host energy plugin per processor: idle power all along, busy - idle while computing.
    const double window_s = std::max(0.0, s.duration_s - std::max(0.0, s.warmup_s));
    const DeviceEnergy energy =
        device_compute_energy(d.power, window_s, devices[i]->busy_seconds_in_window(), devices[i]->processor_busy_seconds_in_window());
    dr.energy_compute_j = energy.compute_j;
    dr.energy_idle_j = energy.idle_j;
    if (d.power.radio.stated()) {
      dr.radio_states = true;
      dr.radio = devices[i]->radio_energy();
      dr.energy_radio_j = dr.radio.total_j();
    } else {
      dr.energy_radio_j = devices[i]->radio_bytes_in_window() / 1e6 * d.power.radio_j_per_mb;
    }
    dr.bytes_sent = devices[i]->bytes_sent();
    dr.bytes_received = devices[i]->bytes_received();
    if (d.hardware) {
      const DeviceHardware& hw = devices[i]->hardware();
      for (int p = 0; p < hw.size(); ++p)
        dr.processors.push_back({hw.processors[static_cast<size_t>(p)], devices[i]->processor_busy_seconds_in_window()[static_cast<size_t>(p)],
                                 devices[i]->processor_peak_bytes()[static_cast<size_t>(p)],
                                 energy.processor_j.empty() ? NAN : energy.processor_j[static_cast<size_t>(p)]});
      for (size_t k = 0; k < hw.pool_names.size(); ++k)
        dr.memory.push_back({hw.pool_names[k], hw.pool_capacity_bytes[k], devices[i]->pool_peak_bytes()[k]});
    }
    window_energy.push_back(dr.energy_j());
    out.devices.push_back(std::move(dr));
  }
  out.events = scenario_event_records(s);
  out.bandwidth = bandwidth_samples(s, end_s);
  record_final_choices(s, out);          // each device's strategy and server at the end (core/run_assembly.hpp)
  digest.finish(s, out, window_energy);  // the summary, each device's rates and the servers' (core/run_assembly.hpp)
  return out;
}

}  // namespace

// The run in phases: checks, the engine's settings, the platform, models and LUTs bound to devices,
// servers and devices, the scheduler and its monitor, joins and the controller, the engine's run,
// results. Each phase is timed under coinfer -v.
RunResults run_simulation(const Scenario& scenario, const ModelCatalog& models, const LutSet& luts, const SimulationOptions& options) {
  log::PhaseTimer phase("run");  // coinfer -v: where the time goes
  check_scenario_against(scenario, models, luts, scheduler_traits(scenario.scheduler.name));
  // The variants each device's scheduler may choose (scheduler.max_output_error), and why others are not:
  // on a copy only where there are choices to make (a copy is ~0.9 KB per device).
  std::optional<Scenario> with_choices;
  if (scenario.scheduler.max_output_error >= 0) {
    with_choices = scenario;
    for (const std::string& note : resolve_variant_choices(*with_choices, models, luts)) log::info("variants", note);
  }
  const Scenario& s = with_choices ? *with_choices : scenario;
  phase.mark("checked the scenario against the models and LUTs");

  int argc = 1;
  char name[] = "coinfer";
  char* argv[] = {name, nullptr};
  sg4::Engine engine(&argc, argv);
  configure_engine(s, options);

  // The devices' transfers computed by coinfer where that is what SimGrid would compute
  // (sim/device_transfers.hpp); their hosts then need no SimGrid links. COINFER_TRANSFERS=simgrid keeps
  // them SimGrid's (a comparison).
  std::string no_network = why_not_device_transfers_by_coinfer(s, options.engine_config);
  if (const char* env = std::getenv("COINFER_TRANSFERS"); env != nullptr && *env != '\0') {
    const std::string v = env;
    if (v != "simgrid" && v != "coinfer")
      throw InputError(SourceLocation{"COINFER_TRANSFERS", 0, 0}, v,
                       "expected simgrid (SimGrid carries the devices' transfers) or coinfer (the default)");
    if (no_network.empty() && v == "simgrid") no_network = "COINFER_TRANSFERS=simgrid";
  }
  Platform platform;
  build_platform(s, platform, !no_network.empty());
  if (!platform.access_point_in_routes)
    log::debug("run", "the access point (" + format_double(s.access_point.bandwidth_mbps) +
                          " Mbit/s, no latency) carries at most the device links' peaks, up and down; it cannot bind and "
                          "is left out of the routes (the same shares, fewer solver constraints)");
  phase.mark("built the platform");
  RequestLedger ledger(s.duration_s, s.hard_end_s(), options.request_chunk);
  RequestDigest digest(s);  // what the summaries take from each request, as it is handed over
  const size_t nd = s.devices.size(), ns = s.servers.size();
  BatchGroupIds groups;
  DeviceBindings bindings = bind_models(s, models, luts, groups);
  const ExecutionTimeModel& time = s.service_time == Scenario::ServiceTime::sampled ? lut_sampled_time() : lut_mean_time();
  std::vector<ArrivedUploads> arrived(ns);
  for (auto& a : arrived) a.arrived = sg4::Semaphore::create(0);
  std::vector<DeviceInbox*> inboxes(nd, nullptr);
  ActivityRetirement retirement;
  std::vector<ServerStatus> server_status(ns);
  const auto server_tables = std::make_shared<const ServerLutIndex>(s, luts, run_models_of(bindings));
  const std::vector<std::pair<int, int>> helpers = helper_pairs(s);
  std::unique_ptr<TransferNetwork> network = no_network.empty() ? std::make_unique<TransferNetwork>(s, platform) : nullptr;
  log::debug("run", network ? "devices' transfers computed by coinfer (CM02 shares)" : "devices' transfers carried by SimGrid: " + no_network);
  const RunWiring wiring{&s,       &luts,       &time,          &platform, &ledger,       &bindings, &arrived,
                         &inboxes, &retirement, &server_status, &groups,   server_tables, &helpers,  network.get()};
  std::vector<std::unique_ptr<ServerTiming>> timings;
  std::vector<std::unique_ptr<ServerActors>> servers = make_servers(wiring, timings);
  std::vector<std::unique_ptr<SimDevice>> devices = make_devices(wiring);
  phase.mark("created the servers and devices");
  std::deque<KernelTimer> join_timers;  // one per join time (below)
  const auto stop_devices = [&devices, &join_timers] {
    in_kernel([&devices, &join_timers] {
      for (auto& t : join_timers) t.cancel();  // a pending timer would keep the engine running to its date
      for (auto& d : devices) d->stop();
    });
  };
  std::unique_ptr<AnalyticEstimator> estimator = make_estimator(s, models, luts);
  std::unique_ptr<Scheduler> scheduler = make_scheduler(s, *estimator);
  phase.mark("set up the estimator and the scheduler");
  MonitorSlice ms;
  ms.scenario = &s;
  ms.host = platform.server_hosts[0];
  for (auto& d : devices) ms.devices.push_back(d.get());
  for (auto& sv : servers) ms.servers.push_back(sv.get());
  ms.control = inboxes;
  ms.stop_devices = stop_devices;
  ms.bandwidth = &platform.device_bandwidth;
  ms.arrivals_end_s = ledger.arrivals_end_s();
  ms.hard_end_s = ledger.hard_end_s();
  const ServerAvailability availability(s);
  ms.set_server_up = [&](int j, bool up) {  // core/server_failures.hpp: the server, then its devices
    const double now = sg4::Engine::get_clock();
    const std::string& id = s.servers[static_cast<size_t>(j)].id;
    const double failed_at = availability.failed_at(j, now);
    servers[static_cast<size_t>(j)]->set_up(up);
    ServerStatus& st = server_status[static_cast<size_t>(j)];
    st.up = up;
    if (!up) ++st.failures;
    st.why_failed = server_failed_reason(id, failed_at);
    st.why_down = server_down_reason(id, failed_at);
    for (size_t i = 0; i < nd; ++i) devices[i]->server_status_changed(j);  // each acts where it has work there
  };
  ms.move_problem = [&](int i, int j, const Strategy& st) -> std::string {
    // The binding the strategy names (SimDevice::apply_control; another keeps the current: checked as the named model).
    const std::string run_model = model_under(s.devices[static_cast<size_t>(i)].model, st);
    const std::vector<ModelBinding>& list = *bindings.of[static_cast<size_t>(i)];
    const ModelBinding* use = &list.front();
    for (const ModelBinding& b : list)
      if (b.run_model == run_model) use = &b;
    if (server_tables->table(j, i, static_cast<int>(use - list.data())) != nullptr) return "";
    return "the LUTs have no table for " +
           LutKey{s.servers[static_cast<size_t>(j)].type, use->run_model, s.devices[static_cast<size_t>(i)].dataset}.to_string();
  };
  SchedulerMonitor monitor(std::move(ms), *scheduler, *estimator);
  check_scheduler_size(s, *estimator, *scheduler, monitor.snapshot(0));
  for (auto& sv : servers) sv->start();
  install_completion_dispatch();
  // Joins: one kernel timer per join time, devices in scenario order (before it a device creates
  // nothing; what reaches it earlier it takes at its join; a join at or after the drain's end never happens).
  std::map<double, std::vector<SimDevice*>> joins;
  for (size_t i = 0; i < nd; ++i)
    if (s.devices[i].join_at_s < ledger.hard_end_s()) joins[s.devices[i].join_at_s].push_back(devices[i].get());
  for (const auto& [at_s, group] : joins)
    join_timers.emplace_back().set(at_s, [&group = group] {
      for (SimDevice* d : group) d->join();
    });
  monitor.start();

  // The ledger's actor with the others (an actor created before a refusal above would outlive it).
  // Each hand-over is one block of its own (a chunk of the ledger).
  RecordOutlet during_run(digest, options.stream_requests, nullptr);
  if (during_run.streamed())
    ledger.release_as_finished(platform.server_hosts[0], [&during_run](SimRequest* first, std::size_t n) {
      for (std::size_t k = 0; k < n; ++k) during_run.take(std::move(first[k].rec));
      during_run.flush();
    });
  double end_s = 0;
  add_actor("controller", platform.server_hosts[0], [&] {
    sg4::this_actor::sleep_until(s.duration_s);
    // Until the last request finished, or the drain's end (hard_end_s) with requests unfinished; then
    // every device stops (their activities cancelled, timers removed) and the engine kills the daemons.
    if (ledger.unfinished() > 0) ledger.all_done()->acquire_timeout(s.drain_s);
    stop_devices();
    end_s = sg4::Engine::get_clock();
  });
  if (options.progress) {
    add_actor("progress", platform.server_hosts[0], [&] {
      const double step = s.duration_s / 20;
      for (int k = 1; k <= 20; ++k) {
        sg4::this_actor::sleep_until(k * step);
        options.progress(sg4::Engine::get_clock(), static_cast<long long>(ledger.size()));
      }
    })->daemonize();
  }
  phase.mark("created the monitor, the joins and the actors");
  const auto wall_start = std::chrono::steady_clock::now();
  engine.run();
  phase.mark("simulated");
  const double engine_wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count();
  if (!monitor.failure().empty()) throw InputError(s.scheduler.where, "scheduler", "the run stopped " + monitor.failure());
  if (!ledger.may_create())
    throw InputError(SourceLocation{s.file, 0, 0}, "duration_s",
                     "the run reached " + std::to_string(limits::kMaxRequests) + " requests, the bound of one simulation, by " +
                         format_double(ledger.back().rec.t_created) +
                         " s of simulated time (a near-zero LUT latency or a very high arrival rate?); shorten duration_s or "
                         "split the run");

  return assemble_results(s, models, luts, ledger, digest, options.stream_requests, devices, monitor.decisions(), end_s, engine_wall_s);
}

}  // namespace coinfer::sim
