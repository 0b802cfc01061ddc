#include "io/results_h5.hpp"

#include "core/input_error.hpp"

#include "plumbing/atomic_dir.hpp"
#include "io/h5_file.hpp"

namespace coinfer {

void write_results_h5(const std::string& path, const RunResults& r) {
  AtomicFile out(path);
  {
    h5::File f = h5::File::create(out.temp_path());
    f.write_attr("/", "format", std::string("coinfer-results"));
    f.write_attr("/", "schema_version", static_cast<std::int64_t>(kResultsSchemaVersion));
    f.write_attr("/", "scenario", r.scenario);
    f.write_attr("/", "scenario_file", r.scenario_file);
    f.write_attr("/", "seed", static_cast<std::int64_t>(r.seed));
    f.write_attr("/", "duration_s", r.duration_s);
    f.write_attr("/", "warmup_s", r.warmup_s);
    f.write_attr("/", "end_s", r.end_s);

    // /requests: one column per field of core/request_record.hpp's table.
    const hsize_t n = r.requests.size();
    for (const RequestField& fd : request_fields()) {
      const std::string name = std::string("/requests/") + fd.name;
      switch (fd.kind) {
        case RequestField::Kind::int64: {
          std::vector<std::int64_t> v(n);
          for (hsize_t i = 0; i < n; ++i) v[i] = fd.get_int(r.requests[i]);
          f.write(name, v, {n}, fd.unit);
          break;
        }
        case RequestField::Kind::int32: {
          std::vector<std::int32_t> v(n);
          for (hsize_t i = 0; i < n; ++i) v[i] = static_cast<std::int32_t>(fd.get_int(r.requests[i]));
          f.write(name, v, {n}, fd.unit);
          break;
        }
        case RequestField::Kind::status: {
          std::vector<std::int8_t> v(n);
          for (hsize_t i = 0; i < n; ++i) v[i] = static_cast<std::int8_t>(fd.get_int(r.requests[i]));
          f.write(name, v, {n}, fd.unit);
          break;
        }
        case RequestField::Kind::real:
        case RequestField::Kind::time: {
          std::vector<double> v(n);
          for (hsize_t i = 0; i < n; ++i) v[i] = fd.get_real(r.requests[i]);
          f.write(name, v, {n}, fd.unit);
          break;
        }
        case RequestField::Kind::text: {
          std::vector<std::string> v(n);
          for (hsize_t i = 0; i < n; ++i) v[i] = fd.get_text(r.requests[i]);
          f.write(name, v);
          break;
        }
      }
    }

    const hsize_t nd = r.devices.size();
    std::vector<std::string> did(nd), dtype(nd), dmodel(nd), ddata(nd), dserver(nd), dstrat(nd);
    std::vector<double> ec(nd), ei(nd), er(nd), bs(nd), br(nd);
    std::vector<double> ra(nd, NAN), rt(nd, NAN), rp(nd, NAN), ri(nd, NAN);
    bool any_radio_states = false;
    for (hsize_t i = 0; i < nd; ++i) {
      const auto& d = r.devices[i];
      did[i] = d.id;
      dtype[i] = d.type;
      dmodel[i] = d.model;
      ddata[i] = d.dataset;
      dserver[i] = d.server;
      dstrat[i] = d.strategy;
      ec[i] = d.energy_compute_j;
      ei[i] = d.energy_idle_j;
      er[i] = d.energy_radio_j;
      if (d.radio_states) {
        any_radio_states = true;
        ra[i] = d.radio.active_j;
        rt[i] = d.radio.tail_j;
        rp[i] = d.radio.promotion_j;
        ri[i] = d.radio.idle_j;
      }
      bs[i] = d.bytes_sent;
      br[i] = d.bytes_received;
    }
    f.write("/devices/id", did);
    f.write("/devices/type", dtype);
    f.write("/devices/model", dmodel);
    f.write("/devices/dataset", ddata);
    f.write("/devices/server", dserver);
    f.write("/devices/strategy", dstrat);
    f.write("/devices/energy_compute_j", ec, {nd}, "J over the measurement window: computing above idle power (testbed: the whole board as metered)");
    f.write("/devices/energy_idle_j", ei, {nd}, "J over the measurement window: idle power all along (testbed: NaN, not split)");
    f.write("/devices/energy_radio_j", er, {nd}, "J over the measurement window: the radio (flat J/MB or power states)");
    if (any_radio_states) {
      f.write("/devices/radio_active_j", ra, {nd}, "J: radio active (base power while transferring + per-Mbit terms); NaN: flat rate");
      f.write("/devices/radio_tail_j", rt, {nd}, "J: radio tail after transfers; NaN: flat rate");
      f.write("/devices/radio_promotion_j", rp, {nd}, "J: radio promotions from idle; NaN: flat rate");
      f.write("/devices/radio_idle_j", ri, {nd}, "J: radio idle; NaN: flat rate");
    }
    f.write("/devices/bytes_sent", bs, {nd}, "bytes");
    f.write("/devices/bytes_received", br, {nd}, "bytes");
    f.write("/servers/id", r.servers);
    if (r.server_results.size() == r.servers.size()) {
      const hsize_t ns = r.servers.size();
      std::vector<double> sb(ns), se(ns), sd(ns);
      std::vector<std::int64_t> sn(ns), sr(ns), sf(ns);
      for (hsize_t i = 0; i < ns; ++i) {
        sb[i] = r.server_results[i].busy_s;
        se[i] = r.server_results[i].energy_j;
        sn[i] = r.server_results[i].batches;
        sr[i] = r.server_results[i].requests;
        sd[i] = r.server_results[i].down_s;
        sf[i] = r.server_results[i].failures;
      }
      f.write("/servers/busy_s", sb, {ns}, "s computing (union of its batches' spans) over the measurement window");
      f.write("/servers/energy_j", se, {ns}, "J over the measurement window: idle_w x (window - down_s) + (busy_w - idle_w) x busy_s; NaN: power not stated");
      f.write("/servers/down_s", sd, {ns}, "s of the measurement window the server was failed (events fail/recover)");
      f.write("/servers/failures", sf, {ns}, "fail events in the measurement window");
      f.write("/servers/batches", sn, {ns}, "batches started in the measurement window");
      f.write("/servers/requests", sr, {ns}, "requests created in the window and completed that it computed a part of");
    }

    const hsize_t ne = r.events.size();
    std::vector<double> et(ne), ev(ne);
    std::vector<std::string> ek(ne), edev(ne), esrv(ne);
    for (hsize_t i = 0; i < ne; ++i) {
      et[i] = r.events[i].t_s;
      ev[i] = r.events[i].value;
      ek[i] = r.events[i].kind;
      edev[i] = r.events[i].device;
      esrv[i] = r.events[i].server;
    }
    f.write("/events/t", et, {ne}, "s");
    f.write("/events/kind", ek);
    f.write("/events/device", edev);
    f.write("/events/server", esrv);
    f.write("/events/value", ev, {ne}, "bandwidth_mbps for kind=bandwidth, the share taken for kind=load");

    f.write_attr("/", "scheduler", r.scheduler);
    if (!r.estimator.empty()) f.write_attr("/", "estimator", r.estimator);
    if (!r.service_time.empty()) f.write_attr("/", "service_time", r.service_time);
    auto joined = [](const std::vector<std::string>& v) {
      std::string j;
      for (const auto& k : v) j += (j.empty() ? "" : ", ") + k;
      return j;
    };
    if (!r.wire_bytes_luts.empty()) f.write_attr("/", "transfer_bytes_measured_from", joined(r.wire_bytes_luts));
    if (!r.tensor_bytes_luts.empty()) f.write_attr("/", "transfer_bytes_spec_tensor_for", joined(r.tensor_bytes_luts));
    if (!r.estimated_lut_entries.empty()) {
      f.write("/provenance/estimated_lut_entries", r.estimated_lut_entries);
      f.write_attr("/", "estimated_lut_entries", static_cast<std::int64_t>(r.estimated_lut_entries.size()));
    }
    // How it was made (RunProvenance): empty strings are left out (results of older programs).
    const RunProvenance& m = r.made_by;
    if (!m.program.empty()) f.write_attr("/", "program", m.program);
    if (!m.commit.empty()) f.write_attr("/", "commit", m.commit);
    if (!m.command_line.empty()) f.write_attr("/", "command_line", m.command_line);
    if (!m.working_directory.empty()) f.write_attr("/", "working_directory", m.working_directory);
    if (!m.scenario_yaml.empty()) f.write_attr("/", "scenario_yaml", m.scenario_yaml);
    f.write_attr("/", "overrides_count", static_cast<std::int64_t>(m.overrides.size()));
    if (!m.overrides.empty()) f.write("/provenance/overrides", m.overrides);
    if (!r.data_files.empty()) {
      std::vector<std::string> role, path, origin;
      for (const auto& d : r.data_files) {
        role.push_back(d.role);
        path.push_back(d.path);
        origin.push_back(d.origin);
      }
      f.write("/provenance/data_files/role", role);
      f.write("/provenance/data_files/path", path);
      f.write("/provenance/data_files/origin", origin);
    }
    if (!r.sampled_luts.empty()) {
      std::string joined;
      for (const auto& k : r.sampled_luts) joined += (joined.empty() ? "" : ", ") + k;
      f.write_attr("/", "service_time_distributions", joined);
    }
    const hsize_t nk = r.decisions.size();
    std::vector<double> kt(nk), kthr(nk), klat(nk);
    std::vector<std::int32_t> ksw(nk);
    std::vector<std::string> ktrig(nk), kscheme(nk);
    for (hsize_t i = 0; i < nk; ++i) {
      const auto& d = r.decisions[i];
      kt[i] = d.t_s;
      kthr[i] = d.predicted_throughput_rps;
      klat[i] = d.predicted_latency_ms;
      ksw[i] = d.switched;
      ktrig[i] = d.trigger;
      kscheme[i] = d.scheme;
    }
    f.write("/decisions/t", kt, {nk}, "s");
    f.write("/decisions/trigger", ktrig);
    f.write("/decisions/scheme", kscheme);
    f.write("/decisions/predicted_throughput_rps", kthr, {nk}, "requests/s");
    f.write("/decisions/predicted_latency_ms", klat, {nk}, "ms");
    f.write("/decisions/switched", ksw, {nk}, "devices sent a new strategy");

    const hsize_t nb = r.bandwidth.size();
    std::vector<double> bt(nb), bm(nb);
    std::vector<std::int32_t> bd(nb);
    for (hsize_t i = 0; i < nb; ++i) {
      bt[i] = r.bandwidth[i].t_s;
      bd[i] = r.bandwidth[i].device;
      bm[i] = r.bandwidth[i].mbps;
    }
    f.write("/bandwidth/t", bt, {nb}, "s");
    f.write("/bandwidth/device", bd, {nb}, "index into /devices");
    f.write("/bandwidth/mbps", bm, {nb}, "Mbit/s from t on");
  }
  out.commit();
}

std::vector<RequestRecord> read_request_records(const std::string& path) {
  h5::File f = h5::File::open_read(path);
  const size_t n = f.read_int64("/requests/id").size();
  std::vector<RequestRecord> out(n);
  for (const RequestField& fd : request_fields()) {
    const std::string name = std::string("/requests/") + fd.name;
    auto same_length = [&](size_t got) {
      if (got != n) throw InputError(SourceLocation{path, 0, 0}, name, std::to_string(got) + " values for " + std::to_string(n) + " requests");
    };
    if (fd.kind == RequestField::Kind::text) {
      std::vector<std::string> v = f.read_strings(name);
      same_length(v.size());
      for (size_t i = 0; i < n; ++i) fd.set_text(out[i], std::move(v[i]));
    } else if (fd.get_real != nullptr) {
      const std::vector<double> v = f.read_double(name);
      same_length(v.size());
      for (size_t i = 0; i < n; ++i) fd.set_real(out[i], v[i]);
    } else {
      const std::vector<std::int64_t> v = f.read_int64(name);
      same_length(v.size());
      for (size_t i = 0; i < n; ++i) fd.set_int(out[i], v[i]);
    }
  }
  return out;
}

}  // namespace coinfer
