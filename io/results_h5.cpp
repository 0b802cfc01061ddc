#include "io/results_h5.hpp"

#include "core/input_error.hpp"

#include "plumbing/atomic_dir.hpp"
#include "io/h5_file.hpp"
#include "io/record_columns.hpp"

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

    // One column per field of each record's table (core/request_record.hpp, core/run_results.hpp).
    write_columns(f, "/requests", r.requests, request_fields());
    write_columns(f, "/devices", r.devices, device_result_fields());
    f.write("/servers/id", r.servers);
    if (r.server_results.size() == r.servers.size()) write_columns(f, "/servers", r.server_results, server_result_fields());
    write_columns(f, "/events", r.events, event_fields());

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
    write_columns(f, "/decisions", r.decisions, decision_fields());
    write_columns(f, "/bandwidth", r.bandwidth, bandwidth_fields());
  }
  out.commit();
}

std::vector<RequestRecord> read_request_records(const std::string& path) { return read_request_records_from(h5::File::open_read(path)); }

std::vector<RequestRecord> read_request_records_from(const h5::Reader& f) { return read_columns(f, f.path(), "/requests", request_fields()); }

}  // namespace coinfer
