// The record field tables (core/record_field.hpp) drive results.h5's columns and the JSON-lines
// formats: each record, with every member set to a value of its own, comes back equal from each format
// that stores it; a table's names are unique; JSON input is checked against the table.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <set>
#include <unistd.h>

#include "core/input_error.hpp"
#include "core/run_results.hpp"
#include "io/decisions_jsonl.hpp"
#include "io/h5_file.hpp"
#include "io/record_columns.hpp"
#include "io/record_json.hpp"
#include "io/results_h5.hpp"
#include "tests/unit/test_support.hpp"

using namespace coinfer;

namespace {

template <class R>
void expect_unique_names(const std::vector<RecordField<R>>& fields, const char* table) {
  std::set<std::string> h5, json;
  for (const auto& f : fields) {
    if (f.in_results_h5) {
      EXPECT_TRUE(h5.insert(f.dataset()).second) << table << ": dataset " << f.dataset() << " twice";
    }
    if (f.in_json) {
      EXPECT_TRUE(json.insert(f.name).second) << table << ": key " << f.name << " twice";
    }
    // The accessors its kind needs are there.
    const bool has = f.is_integer() ? f.get_int && f.set_int : f.is_number() ? f.get_real && f.set_real : f.get_text && f.set_text;
    EXPECT_TRUE(has) << table << "." << f.name << ": accessors missing for its kind";
  }
}

std::string temp_dir() { return coinfer::test::temp_dir("record-fields"); }

// A run with one row in each table, every member set to a value that is not its default.
RunResults one_of_each() {
  RunResults r;
  r.scenario = "fields";
  r.servers = {"edge0"};
  DeviceResult d;
  d.id = "pi0", d.type = "rpi4b", d.model = "gcn", d.dataset = "cora", d.server = "edge0", d.strategy = "pp(2)";
  d.energy_compute_j = 1.5, d.energy_idle_j = 2.5, d.energy_radio_j = 0.75;
  d.radio_states = true;
  d.radio.active_j = 0.25, d.radio.tail_j = 0.125, d.radio.promotion_j = 0.0625, d.radio.idle_j = 0.3125;
  d.bytes_sent = 1000, d.bytes_received = 2000;
  r.devices = {d};
  ServerResult s;
  s.id = "edge0", s.busy_s = 3.5, s.energy_j = 40.25, s.down_s = 1.25, s.failures = 2, s.batches = 17, s.requests = 33;
  r.server_results = {s};
  r.events = {EventRecord{4.5, "fail", "", 0, "edge0", "", ""}, EventRecord{5.5, "bandwidth", "pi0", 12.5, "", "", ""},
              EventRecord{6.5, "handover", "pi0", 0, "", "ap1", "ap0"}};
  r.decisions = {DecisionRecord{1.25, "start+join:a", "a=local helpers=[]", 12.5, 80.25, 3, 0.003, R"({"x":1})"}};
  r.bandwidth = {BandwidthSample{0.5, 0, 25}};
  return r;
}

}  // namespace

TEST(RecordFields, NamesAreUniqueAndAccessorsPresent) {
  expect_unique_names(request_fields(), "requests");
  expect_unique_names(device_result_fields(), "devices");
  expect_unique_names(server_result_fields(), "servers");
  expect_unique_names(event_fields(), "events");
  expect_unique_names(decision_fields(), "decisions");
  expect_unique_names(bandwidth_fields(), "bandwidth");
}

TEST(RecordFields, EveryRecordSurvivesResultsH5) {
  const RunResults a = one_of_each();
  const std::string path = temp_dir() + "/results.h5";
  write_results_h5(path, a);
  const h5::File f = h5::File::open_read(path);
  // Decisions: results.h5 keeps the time as "t" (schema 1) and has neither wall_s nor detail.
  EXPECT_TRUE(f.exists("/decisions/t"));
  EXPECT_FALSE(f.exists("/decisions/wall_s"));
  EXPECT_FALSE(f.exists("/decisions/detail"));
  const auto dec = read_columns(f, path, "/decisions", decision_fields());
  ASSERT_EQ(dec.size(), 1u);
  EXPECT_EQ(dec[0].t_s, 1.25);
  EXPECT_EQ(dec[0].trigger, "start+join:a");
  EXPECT_EQ(dec[0].scheme, "a=local helpers=[]");
  EXPECT_EQ(dec[0].predicted_throughput_rps, 12.5);
  EXPECT_EQ(dec[0].predicted_latency_ms, 80.25);
  EXPECT_EQ(dec[0].switched, 3);
  EXPECT_EQ(dec[0].wall_s, 0);   // not stored
  EXPECT_EQ(dec[0].detail, "");  // not stored
  const auto ev = read_columns(f, path, "/events", event_fields());
  ASSERT_EQ(ev.size(), 3u);
  EXPECT_EQ(ev[0].t_s, 4.5);
  EXPECT_EQ(ev[0].kind, "fail");
  EXPECT_EQ(ev[0].server, "edge0");
  EXPECT_EQ(ev[1].device, "pi0");
  EXPECT_EQ(ev[1].value, 12.5);
  EXPECT_EQ(ev[2].kind, "handover");
  EXPECT_EQ(ev[2].access_point, "ap1");
  EXPECT_EQ(ev[2].from_access_point, "ap0");
  const auto srv = read_columns(f, path, "/servers", server_result_fields());
  ASSERT_EQ(srv.size(), 1u);
  EXPECT_EQ(srv[0].busy_s, 3.5);
  EXPECT_EQ(srv[0].energy_j, 40.25);
  EXPECT_EQ(srv[0].down_s, 1.25);
  EXPECT_EQ(srv[0].failures, 2);
  EXPECT_EQ(srv[0].batches, 17);
  EXPECT_EQ(srv[0].requests, 33);
  const auto bw = read_columns(f, path, "/bandwidth", bandwidth_fields());
  ASSERT_EQ(bw.size(), 1u);
  EXPECT_EQ(bw[0].t_s, 0.5);
  EXPECT_EQ(bw[0].device, 0);
  EXPECT_EQ(bw[0].mbps, 25);
  const auto dev = read_columns(f, path, "/devices", device_result_fields());
  ASSERT_EQ(dev.size(), 1u);
  const DeviceResult& d = a.devices[0];
  EXPECT_EQ(dev[0].id, d.id);
  EXPECT_EQ(dev[0].type, d.type);
  EXPECT_EQ(dev[0].model, d.model);
  EXPECT_EQ(dev[0].dataset, d.dataset);
  EXPECT_EQ(dev[0].server, d.server);
  EXPECT_EQ(dev[0].strategy, d.strategy);
  EXPECT_EQ(dev[0].energy_compute_j, 1.5);
  EXPECT_EQ(dev[0].energy_idle_j, 2.5);
  EXPECT_EQ(dev[0].energy_radio_j, 0.75);
  EXPECT_EQ(dev[0].radio.active_j, 0.25);
  EXPECT_EQ(dev[0].radio.tail_j, 0.125);
  EXPECT_EQ(dev[0].radio.promotion_j, 0.0625);
  EXPECT_EQ(dev[0].radio.idle_j, 0.3125);
  EXPECT_EQ(dev[0].bytes_sent, 1000);
  EXPECT_EQ(dev[0].bytes_received, 2000);
}

TEST(RecordFields, RadioColumnsOnlyWhereADeviceHasRadioStates) {
  RunResults a = one_of_each();
  DeviceResult flat = a.devices[0];
  flat.id = "pi1";
  flat.radio_states = false;
  a.devices.push_back(flat);
  const std::string dir = temp_dir();
  write_results_h5(dir + "/some.h5", a);
  {
    const h5::File f = h5::File::open_read(dir + "/some.h5");
    const std::vector<double> tail = f.read_double("/devices/radio_tail_j");
    ASSERT_EQ(tail.size(), 2u);
    EXPECT_EQ(tail[0], 0.125);
    EXPECT_TRUE(std::isnan(tail[1]));  // the flat-rate device: NaN, not its (unused) member
  }
  a.devices = {flat};
  write_results_h5(dir + "/none.h5", a);
  const h5::File f = h5::File::open_read(dir + "/none.h5");
  EXPECT_FALSE(f.exists("/devices/radio_tail_j"));
  EXPECT_TRUE(f.exists("/devices/bytes_sent"));
}

TEST(RecordFields, DecisionJsonCarriesEveryKeyAndIsChecked) {
  const DecisionRecord a = one_of_each().decisions[0];
  const nlohmann::json j = nlohmann::json::parse(decision_to_json(a));
  // The JSON keys are the table's names: the time is t_s (results.h5's column "t").
  for (const char* k : {"t_s", "trigger", "scheme", "predicted_throughput_rps", "predicted_latency_ms", "switched", "wall_s", "detail"})
    EXPECT_TRUE(j.contains(k)) << k;
  EXPECT_EQ(j.size(), 8u);
  EXPECT_EQ(j["detail"]["x"], 1);  // an object, not a string
  const DecisionRecord b = decision_from_json(j.dump());
  EXPECT_EQ(b.t_s, 1.25);
  EXPECT_EQ(b.switched, 3);
  EXPECT_EQ(b.wall_s, 0.003);
  EXPECT_EQ(b.detail, R"({"x":1})");
  // No detail: the key is left out, and reads back as "".
  DecisionRecord plain = a;
  plain.detail.clear();
  EXPECT_FALSE(nlohmann::json::parse(decision_to_json(plain)).contains("detail"));
  EXPECT_EQ(decision_from_json(decision_to_json(plain)).detail, "");
  // Every key but the detail is required; switched is a count; the detail is an object.
  for (const char* k : {"t_s", "trigger", "scheme", "predicted_throughput_rps", "predicted_latency_ms", "switched", "wall_s"}) {
    nlohmann::json m = j;
    m.erase(k);
    EXPECT_THROW(decision_from_json(m.dump()), InputError) << "without " << k;
  }
  for (const nlohmann::json& bad : {nlohmann::json(-1), nlohmann::json(1e300), nlohmann::json(2.5), nlohmann::json("3")}) {
    nlohmann::json m = j;
    m["switched"] = bad;
    EXPECT_THROW(decision_from_json(m.dump()), InputError) << "switched " << bad.dump();
  }
  nlohmann::json m = j;
  m["detail"] = "text";
  EXPECT_THROW(decision_from_json(m.dump()), InputError);
}

TEST(RecordFields, RequestJsonDefaultsWhereAKeyIsAbsent) {
  // Only id and device are required in a records journal; the others take the table's fallbacks:
  // server and helper -1 (none), times NaN, numbers 0, status ok.
  const RequestRecord r = record_from_json(nlohmann::json::parse(R"({"id": 4, "device": 1})"), request_fields());
  EXPECT_EQ(r.id, 4);
  EXPECT_EQ(r.device, 1);
  EXPECT_EQ(r.server, -1);
  EXPECT_EQ(r.helper, -1);
  EXPECT_TRUE(std::isnan(r.t_created));
  EXPECT_EQ(r.bytes_up, 0);
  EXPECT_EQ(r.status, RequestRecord::Status::ok);
  EXPECT_THROW(record_from_json(nlohmann::json::parse(R"({"id": 4})"), request_fields()), std::invalid_argument);
  EXPECT_THROW(record_from_json(nlohmann::json::parse(R"({"id": 4, "device": -2})"), request_fields()), std::invalid_argument);
  // A time that did not happen is null, and null reads back as NaN.
  RequestRecord a;
  a.id = 1;
  const nlohmann::json j = record_to_json(a, request_fields());
  EXPECT_TRUE(j["t_result"].is_null());
  EXPECT_EQ(j["status"], "ok");
}

namespace {

// Ten requests, each field of its own value: request i created at i/2 s, strategy "pp(i)", every odd
// one failed with "why i".
std::vector<RequestRecord> ten_requests() {
  std::vector<RequestRecord> out(10);
  for (int i = 0; i < 10; ++i) {
    RequestRecord& q = out[static_cast<size_t>(i)];
    q.id = i, q.device = 0, q.server = i % 2, q.strategy = "pp(" + std::to_string(i) + ")", q.split = i;
    q.t_created = i * 0.5, q.t_result = i * 0.5 + 0.25, q.batch_size = i + 1, q.bytes_up = 100.0 * i;
    if (i % 2) q.status = RequestRecord::Status::failed, q.failure = "why " + std::to_string(i), q.t_result = NAN;
  }
  return out;
}

// A run with one row in each table and ten_requests(), written whole to DIR/whole.h5; its path.
std::string whole_file(const std::string& dir) {
  RunResults whole = one_of_each();
  whole.requests = ten_requests();
  write_results_h5(dir + "/whole.h5", whole);
  return dir + "/whole.h5";
}

std::string bytes_of(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

bool chunked(const std::string& path, const std::string& dataset) {
  const h5::File f = h5::File::open_read(path);
  const hid_t d = H5Dopen2(f.root(), dataset.c_str(), H5P_DEFAULT);
  const hid_t p = H5Dget_create_plist(d);
  const bool out = H5Pget_layout(p) == H5D_CHUNKED;
  H5Pclose(p);
  H5Dclose(d);
  return out;
}

}  // namespace

// Past its buffer (3 rows here) the writer grows /requests block by block (blocks of 4, 4 and 2, then
// none with the rest of the run): the same rows and the same other tables as the file written whole.
TEST(ResultsWriter, BlockByBlockReadsBackAsTheWholeFile) {
  const std::string dir = temp_dir();
  const std::string whole = whole_file(dir);

  RunResults rest = one_of_each();
  rest.requests.clear();
  const std::vector<RequestRecord> all = ten_requests();
  ResultsH5Writer writer(dir + "/blocks.h5", 3);
  for (const auto& [from, to] : std::vector<std::pair<size_t, size_t>>{{0, 4}, {4, 8}, {8, 10}}) {
    std::vector<RequestRecord> block(all.begin() + static_cast<long>(from), all.begin() + static_cast<long>(to));
    writer.add_requests(block);
    EXPECT_TRUE(block.empty());
    EXPECT_FALSE(std::filesystem::exists(dir + "/blocks.h5")) << "nothing appears before finish()";
  }
  writer.finish(rest);
  EXPECT_EQ(writer.requests(), 10);

  test::expect_same_rows(read_request_records(whole), read_request_records(dir + "/blocks.h5"), request_fields(), "requests");
  EXPECT_TRUE(chunked(dir + "/blocks.h5", "/requests/t_created"));
  EXPECT_FALSE(chunked(whole, "/requests/t_created"));
  const h5::File a = h5::File::open_read(whole), b = h5::File::open_read(dir + "/blocks.h5");
  EXPECT_EQ(a.read_attr_string("/", "scenario"), b.read_attr_string("/", "scenario"));
  EXPECT_EQ(a.read_double("/devices/energy_idle_j"), b.read_double("/devices/energy_idle_j"));
  EXPECT_EQ(a.read_strings("/decisions/scheme"), b.read_strings("/decisions/scheme"));
  EXPECT_EQ(a.read_double("/servers/busy_s"), b.read_double("/servers/busy_s"));
}

// Within its buffer the writer writes the file exactly as write_results_h5 does, byte for byte, with
// the requests handed over in blocks or with the rest of the run.
TEST(ResultsWriter, WithinItsBufferTheFileIsTheWholeFileByteForByte) {
  const std::string dir = temp_dir();
  const std::string whole = whole_file(dir);

  RunResults rest = one_of_each();
  std::vector<RequestRecord> all = ten_requests();
  rest.requests.assign(all.begin() + 6, all.end());
  std::vector<RequestRecord> first(all.begin(), all.begin() + 6);
  ResultsH5Writer writer(dir + "/held.h5", 10);
  writer.add_requests(first);
  writer.finish(rest);
  EXPECT_EQ(bytes_of(whole), bytes_of(dir + "/held.h5"));
}

// A writer that never finishes (the run threw) leaves nothing behind, even past its buffer.
TEST(ResultsWriter, WithoutFinishNothingIsLeft) {
  const std::string dir = temp_dir();
  {
    ResultsH5Writer writer(dir + "/results.h5", 2);
    std::vector<RequestRecord> all = ten_requests();
    writer.add_requests(all);
  }
  EXPECT_TRUE(std::filesystem::is_empty(dir));
}

// A run's failure column holds one text a request, up to the 10,000,000 requests a run may make: a
// column past 2^20 texts (the old bound, which refused the results of ~1 M-request runs) reads back
// whole.
TEST(ResultsWriter, AFailureColumnOfMoreThanAMillionTextsReadsBack) {
  const std::string path = temp_dir() + "/texts.h5";
  const size_t n = (size_t{1} << 20) + 3;
  std::vector<std::string> texts(n);
  texts[0] = "first";
  texts[n - 1] = "last";  // the one past 2^20 + 1, so a cut after 2^20 would lose it
  {
    h5::File f = h5::File::create(path);
    f.write("/requests/failure", texts);
  }
  const std::vector<std::string> back = h5::File::open_read(path).read_strings("/requests/failure");
  ASSERT_EQ(back.size(), n);
  EXPECT_EQ(back.front(), "first");
  EXPECT_EQ(back.back(), "last");
  EXPECT_EQ(back[n / 2], "");
}
