#include "io/results_h5.hpp"

#include <optional>
#include <utility>

#include "core/input_error.hpp"

#include "plumbing/atomic_dir.hpp"
#include "io/h5_file.hpp"
#include "io/record_columns.hpp"

namespace coinfer {

namespace {

// Rows per chunk of a /requests column written block by block (128 KB of doubles: well inside HDF5's
// 1 MB cache per dataset, so a block fills its chunk there before it is written).
constexpr hsize_t kChunkRows = 16384;

// The root's identifying attributes (written first in a whole file).
void write_head(h5::File& f, const RunResults& r) {
  f.write_attr("/", "format", std::string("coinfer-results"));
  f.write_attr("/", "schema_version", static_cast<std::int64_t>(kResultsSchemaVersion));
  f.write_attr("/", "scenario", r.scenario);
  f.write_attr("/", "scenario_file", r.scenario_file);
  f.write_attr("/", "seed", static_cast<std::int64_t>(r.seed));
  f.write_attr("/", "duration_s", r.duration_s);
  f.write_attr("/", "warmup_s", r.warmup_s);
  f.write_attr("/", "end_s", r.end_s);
}

// Everything after /requests.
void write_tail(h5::File& f, const RunResults& r) {
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

}  // namespace

struct ResultsH5Writer::Impl {
  explicit Impl(std::string path) : out(std::move(path)) {}
  AtomicFile out;
  std::size_t buffer_rows = 0;
  std::vector<RequestRecord> held;  // before the first write past buffer_rows
  std::optional<h5::File> file;     // open once requests are written block by block
};

ResultsH5Writer::ResultsH5Writer(std::string path, std::size_t buffer_rows) : impl_(std::make_unique<Impl>(std::move(path))) {
  impl_->buffer_rows = buffer_rows;
}

ResultsH5Writer::~ResultsH5Writer() = default;

void ResultsH5Writer::add_requests(std::vector<RequestRecord>& block) {
  Impl& m = *impl_;
  requests_ += static_cast<long long>(block.size());
  if (!m.file) {
    if (m.held.size() + block.size() <= m.buffer_rows) {
      for (auto& q : block) m.held.push_back(std::move(q));
      block.clear();
      return;
    }
    m.file.emplace(h5::File::create(m.out.temp_path()));
    append_columns(*m.file, "/requests", m.held, request_fields(), kChunkRows);
    m.held = {};
  }
  append_columns(*m.file, "/requests", block, request_fields(), kChunkRows);
  block.clear();
}

void ResultsH5Writer::finish(const RunResults& r) {
  Impl& m = *impl_;
  requests_ += static_cast<long long>(r.requests.size());
  if (!m.file) {
    // Every request at hand: the whole file in one go, as write_results_h5 has always written it.
    h5::File f = h5::File::create(m.out.temp_path());
    write_head(f, r);
    // One column per field of each record's table (core/request_record.hpp, core/run_results.hpp).
    if (m.held.empty()) {
      write_columns(f, "/requests", r.requests, request_fields());
    } else {
      m.held.insert(m.held.end(), r.requests.begin(), r.requests.end());
      write_columns(f, "/requests", m.held, request_fields());
    }
    write_tail(f, r);
  } else {
    h5::File& f = *m.file;
    append_columns(f, "/requests", r.requests, request_fields(), kChunkRows);
    write_head(f, r);
    write_tail(f, r);
    m.file.reset();  // closed before the rename
  }
  m.held = {};
  m.out.commit();
}

void write_results_h5(const std::string& path, const RunResults& r) {
  ResultsH5Writer writer(path);
  writer.finish(r);
}

std::vector<RequestRecord> read_request_records(const std::string& path) { return read_request_records_from(h5::File::open_read(path)); }

std::vector<RequestRecord> read_request_records_from(const h5::Reader& f) { return read_columns(f, f.path(), "/requests", request_fields()); }

}  // namespace coinfer
