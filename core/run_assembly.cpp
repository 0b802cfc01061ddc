#include "core/run_assembly.hpp"

#include <unordered_map>
#include <unordered_set>

#include <algorithm>
#include <cmath>
#include <sstream>

#include "core/bandwidth_schedule.hpp"
#include "core/mobility.hpp"
#include "core/text_util.hpp"

namespace coinfer {

std::vector<EventRecord> scenario_event_records(const Scenario& s) {
  std::vector<EventRecord> out;
  for (const auto& e : s.events) {
    const auto* b = e.as<event::Bandwidth>();
    const auto* l = e.as<event::Load>();
    const auto* h = e.as<event::Handover>();
    const double value = b ? b->mbps : l ? l->share : 0;
    out.push_back(EventRecord{e.at_s, e.kind_name(), e.device(), value, e.server(), h ? h->access_point : "", h ? h->from_access_point : ""});
  }
  // Devices that join by their own join_at_s (not an events[] join, listed above): one record each, so
  // the list a decision's summarised trigger ("join:7000 devices of d*") stands for is in the results.
  std::unordered_set<std::string> joined_by_event;
  for (const auto& e : s.events)
    if (const auto* j = e.as<event::Join>()) joined_by_event.insert(j->device);
  for (const auto& d : s.devices)
    if (d.join_at_s > 0 && !joined_by_event.count(d.id)) out.push_back(EventRecord{d.join_at_s, "join", d.id, 0, "", "", ""});
  out.push_back(EventRecord{s.duration_s, "arrivals_end", "", 0, "", "", ""});
  std::stable_sort(out.begin(), out.end(), [](const EventRecord& a, const EventRecord& b) { return a.t_s < b.t_s; });
  return out;
}

std::vector<BandwidthSample> bandwidth_samples(const Scenario& s, double end_s) {
  std::vector<BandwidthSample> out;
  for (size_t i = 0; i < s.devices.size(); ++i) {
    const BandwidthSchedule schedule(s.devices[i], s.events);  // named: points() refers into it
    for (const auto& p : schedule.points())
      if (p.t_s <= end_s) out.push_back(BandwidthSample{p.t_s, static_cast<int>(i), p.mbps});
  }
  return out;
}

namespace {

// Each device's strategy and server text at the end of the run, "" where no decision names it: one
// pass over the decisions in order, each scheme text read once (per device, devices x decisions x
// scheme text took 14 s for 1,000 devices and 380 decisions). A scheme text is "id=strategy ...
// helpers=[...]" then optionally " batching=[...]" and " servers=[id:server,...]" (core/scheme.cpp):
// the last word naming a device and the last servers entry naming it win.
struct FinalChoices {
  std::vector<std::string> strategy, server;
};
FinalChoices final_choices(const Scenario& s, const std::vector<DecisionRecord>& decisions) {
  std::unordered_map<std::string, size_t> index;
  for (size_t i = 0; i < s.devices.size(); ++i) index.emplace(s.devices[i].id, i);
  FinalChoices out{std::vector<std::string>(s.devices.size()), std::vector<std::string>(s.devices.size())};
  const std::string key = " servers=[";
  for (const DecisionRecord& d : decisions) {
    const size_t at = d.scheme.rfind(key);
    std::istringstream words(d.scheme.substr(0, at));
    for (std::string w; words >> w;) {
      const auto eq = w.rfind('=');  // ids may hold '=', strategy texts do not
      if (eq == std::string::npos) continue;
      auto it = index.find(w.substr(0, eq));
      if (it != index.end() && it->first != "helpers" && it->first != "batching" && it->first != "servers")
        out.strategy[it->second] = w.substr(eq + 1);
    }
    if (at == std::string::npos) continue;
    const size_t end = d.scheme.find(']', at);
    std::istringstream entries(d.scheme.substr(at + key.size(), end == std::string::npos ? std::string::npos : end - at - key.size()));
    for (std::string e; std::getline(entries, e, ',');) {
      const auto colon = e.rfind(':');  // server ids hold no ':'
      if (colon == std::string::npos) continue;
      auto it = index.find(e.substr(0, colon));
      if (it != index.end()) out.server[it->second] = e.substr(colon + 1);
    }
  }
  return out;
}

}  // namespace

std::string strategy_at_end(const Scenario& s, const std::vector<DecisionRecord>& decisions, int device) {
  const std::string text = final_choices(s, decisions).strategy.at(static_cast<size_t>(device));
  return text.empty() ? s.devices[static_cast<size_t>(device)].strategy.to_string() : text;
}

std::string server_at_end(const Scenario& s, const std::vector<DecisionRecord>& decisions, int device) {
  const std::string text = final_choices(s, decisions).server.at(static_cast<size_t>(device));
  return text.empty() ? s.devices[static_cast<size_t>(device)].server : text;
}

void record_final_choices(const Scenario& s, RunResults& r) {
  const FinalChoices c = final_choices(s, r.decisions);
  for (size_t i = 0; i < r.devices.size() && i < s.devices.size(); ++i) {
    r.devices[i].strategy = c.strategy[i].empty() ? s.devices[i].strategy.to_string() : c.strategy[i];
    r.devices[i].server = c.server[i].empty() ? s.devices[i].server : c.server[i];
  }
}

namespace {
constexpr const char* kDrainFailurePrefix = "not finished ";
}

std::string drain_failure_text(const RequestRecord& x, double drain_s) {
  const char* where = "waiting to start on the device";
  if (!std::isnan(x.t_cloud_batch_end))
    where = "result on its way back from the cloud";
  else if (!std::isnan(x.t_cloud_batch_start))
    where = "running on the cloud server";
  else if (!std::isnan(x.t_cloud_queued))
    where = "queued at the cloud server";
  else if (x.cloud >= 0)
    where = "on its way to the cloud server";
  else if (!std::isnan(x.t_batch_end))
    where = "result on its way back to the device";
  else if (!std::isnan(x.t_batch_start))
    where = x.helper >= 0 ? "running on an idle helper device" : "running on the server";
  else if (!std::isnan(x.t_queued))
    where = "queued at the server";
  else if (!std::isnan(x.t_device_end) || (x.split == 0 && !std::isnan(x.t_created) && x.bytes_up > 0))
    where = "on the uplink or waiting for it";
  else if (!std::isnan(x.t_device_start))
    where = "computing on the device";
  return kDrainFailurePrefix + format_double(drain_s) + " s after arrivals ended (drain_s): " + where;
}

bool is_drain_failure(const std::string& failure) {
  return failure.rfind(kDrainFailurePrefix, 0) == 0 && failure.find("(drain_s)") != std::string::npos;
}

namespace {
std::vector<double> deadlines_of(const Scenario& s) {
  std::vector<double> out;
  for (const auto& d : s.devices) out.push_back(d.workload.deadline_ms * 1e-3);
  return out;
}
}  // namespace

RequestDigest::RequestDigest(const Scenario& s)
    : metrics_(s.devices.size(), s.warmup_s, s.duration_s - s.warmup_s, deadlines_of(s)), servers_(s), warmup_s_(s.warmup_s) {}

void RequestDigest::add(const RequestRecord& r) {
  ++count_;
  metrics_.add(r);
  servers_.add(r);
  resends_ += r.resends;
  handover_failures_ += is_handover_failure(r.failure) ? 1 : 0;
  if (r.status == RequestRecord::Status::ok || r.t_created < warmup_s_) return;
  static const std::string kNone = "(no reason recorded)";
  const std::string& why = r.failure.empty() ? kNone : r.failure;
  auto it = reasons_.find(why);
  if (it != reasons_.end())
    ++it->second;
  else if (reasons_.size() < kMaxFailureReasons)
    reasons_.emplace(why, 1);
  else
    ++reasons_[kOtherFailureReasons];
}

void RequestDigest::finish(const Scenario& s, RunResults& r, const std::vector<double>& window_energy_j) {
  std::vector<std::string> ids;
  for (const auto& d : s.devices) ids.push_back(d.id);
  r.summary = metrics_.finish(ids, window_energy_j);
  for (size_t i = 0; i < r.devices.size() && i < r.summary.size(); ++i) {
    const MetricsSummary& m = r.summary[i];
    DeviceResult& d = r.devices[i];
    d.throughput_rps = m.throughput_rps;
    d.throughput_incl_drain_rps = m.throughput_incl_drain_rps;
    d.offered_rps = m.offered_rps;
    d.saturated = m.saturated;
  }
  r.server_results = servers_.finish(s);
  r.request_count = count_;
  r.failure_reasons = std::move(reasons_);
  reasons_.clear();
  r.resends = resends_;
  r.handover_failures = handover_failures_;
}

void summarise_run(const Scenario& s, RunResults& r, const std::vector<double>& window_energy_j) {
  RequestDigest digest(s);
  for (const RequestRecord& q : r.requests) digest.add(q);
  digest.finish(s, r, window_energy_j);
}

ServerTally::ServerTally(const Scenario& s)
    : warmup_s_(s.warmup_s), t0_(std::max(0.0, s.warmup_s)), t1_(std::max(t0_, s.duration_s)), spans_(s.servers.size()), out_(s.servers.size()) {
  for (size_t i = 0; i < s.servers.size(); ++i) out_[i].id = s.servers[i].id, out_[i].type = s.servers[i].type;
}

void ServerTally::add(const RequestRecord& r) {
  // A span equal to the server's last one is its batch's again (finish() keeps each span once).
  auto span = [this](size_t server, double a, double b) {
    auto& v = spans_[server];
    if (v.empty() || v.back() != std::make_pair(a, b)) v.emplace_back(a, b);
  };
  const size_t servers = spans_.size();
  // Its cloud's batch (pp(k,m)) counts on the cloud as its edge's counts on the edge.
  if (r.cloud >= 0 && static_cast<size_t>(r.cloud) < servers && !std::isnan(r.t_cloud_batch_start) && !std::isnan(r.t_cloud_batch_end)) {
    if (r.done() && r.t_created >= warmup_s_) ++out_[static_cast<size_t>(r.cloud)].requests;
    span(static_cast<size_t>(r.cloud), r.t_cloud_batch_start, r.t_cloud_batch_end);
  }
  if (r.server < 0 || static_cast<size_t>(r.server) >= servers || r.helper >= 0) return;
  if (std::isnan(r.t_batch_start) || std::isnan(r.t_batch_end)) return;
  if (r.done() && r.t_created >= warmup_s_) ++out_[static_cast<size_t>(r.server)].requests;
  span(static_cast<size_t>(r.server), r.t_batch_start, r.t_batch_end);
}

std::vector<ServerResult> ServerTally::finish(const Scenario& s) {
  const double t0 = t0_, t1 = t1_;
  std::vector<ServerResult> out = std::move(out_);
  auto& spans = spans_;
  for (size_t i = 0; i < spans.size(); ++i) {
    auto& v = spans[i];
    std::sort(v.begin(), v.end());
    v.erase(std::unique(v.begin(), v.end()), v.end());  // the requests of one batch share its span
    double busy = 0, cur_a = 0, cur_b = -1;
    for (const auto& [a, b] : v) {
      if (a >= t0 && a < t1) ++out[i].batches;
      const double ca = std::max(t0, a), cb = std::min(t1, b);
      if (cb <= ca) continue;
      if (ca > cur_b) {
        if (cur_b > cur_a) busy += cur_b - cur_a;
        cur_a = ca, cur_b = cb;
      } else {
        cur_b = std::max(cur_b, cb);
      }
    }
    if (cur_b > cur_a) busy += cur_b - cur_a;
    out[i].busy_s = busy;
    const ServerSpec& sv = s.servers[i];
    // Down: from each fail to its recover (or the run's end), clipped to the window.
    double down_since = -1;
    for (const EventSpec& e : s.events) {
      if (e.server() != sv.id) continue;
      if (e.is<event::ServerFail>()) {
        down_since = e.at_s;
        out[i].failures += e.at_s >= t0 && e.at_s < t1;
      } else if (e.is<event::ServerRecover>() && down_since >= 0) {
        out[i].down_s += std::max(0.0, std::min(t1, e.at_s) - std::max(t0, down_since));
        down_since = -1;
      }
    }
    if (down_since >= 0) out[i].down_s += std::max(0.0, t1 - std::max(t0, down_since));
    if (sv.idle_w > 0 || sv.busy_w > 0) out[i].energy_j = sv.idle_w * (t1 - t0 - out[i].down_s) + (sv.busy_w - sv.idle_w) * busy;
  }
  spans_.clear();
  out_.clear();
  return out;
}

std::vector<ServerResult> server_results(const Scenario& s, const std::vector<RequestRecord>& records) {
  ServerTally tally(s);
  for (const RequestRecord& r : records) tally.add(r);
  return tally.finish(s);
}

}  // namespace coinfer
