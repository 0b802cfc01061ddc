// summary.json (io/summary_json.hpp) is written member by member, a device at a time; the text must be
// what nlohmann's dump(2) makes of the same document. Reading it back and dumping it again with
// nlohmann gives that text, so the two must be equal byte for byte, for sections present and absent,
// empty per-device objects, and names that need escaping.
#include <gtest/gtest.h>

#include <cmath>
#include <nlohmann/json.hpp>

#include "io/summary_json.hpp"

using namespace coinfer;

namespace {

std::string redumped(const std::string& text) {
  return nlohmann::ordered_json::parse(text).dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

MetricsSummary metrics_of(const std::string& id, long long created) {
  MetricsSummary m;
  m.id = id;
  m.created = created;
  m.completed = created;
  m.delivered = created;
  m.latency.mean_ms = 12.5;
  m.latency.p50_ms = NAN;  // written as null
  return m;
}

}  // namespace

TEST(SummaryJson, TheStreamedTextIsNlohmannsDumpOfTheSameDocument) {
  RunResults r;
  r.scenario = "s \"quoted\"";
  r.duration_s = 10;
  r.warmup_s = 1;
  r.scheduler = "static";
  // No device: an empty "devices" object, no hardware or energy section.
  r.summary = {metrics_of("total", 0)};
  std::string text = summary_json_text(r);
  EXPECT_EQ(text, redumped(text));
  EXPECT_NE(text.find("\"devices\": {}"), std::string::npos);
  EXPECT_EQ(text.find("\"hardware\""), std::string::npos);
  EXPECT_EQ(text.find("\"energy\""), std::string::npos);

  // Two devices, one with processors and memory, both with energy; an id with a backslash and a tab.
  for (const std::string id : {"d0", "odd\\id\t"}) {
    DeviceResult d;
    d.id = id;
    d.energy_compute_j = 1.5;
    d.energy_idle_j = 0.25;
    r.devices.push_back(d);
    r.summary.push_back(metrics_of(id, 4));
  }
  r.devices[0].processors = {{"cpu", 0.5, 1e6, NAN}, {"gpu", 0.25, 2e6, 3.0}};
  r.devices[0].memory = {{"shared", 8e9, 3e6}};
  text = summary_json_text(r);
  EXPECT_EQ(text, redumped(text));
  const auto j = nlohmann::ordered_json::parse(text);
  EXPECT_EQ(j["hardware"]["devices"].size(), 1u);  // only the device with processors
  EXPECT_EQ(j["energy"]["devices"].size(), 2u);
  // The total's energy is the devices' sum: 2 x 1.5 J computing over 8 results delivered.
  EXPECT_DOUBLE_EQ(j["energy"]["total"]["compute_j"].get<double>(), 3.0);
  EXPECT_DOUBLE_EQ(j["energy"]["total"]["per_inference_j"]["compute"].get<double>(), 3.0 / 8);
  EXPECT_EQ(j["devices"].size(), 2u);
  EXPECT_TRUE(j["devices"]["odd\\id\t"]["latency_ms"]["p50"].is_null());
  // Key order: the totals before the devices, as documented.
  EXPECT_LT(text.find("\"total\": {\n    \"throughput_rps\""), text.rfind("\"devices\": {"));
}
