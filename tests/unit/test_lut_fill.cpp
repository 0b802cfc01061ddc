// LUT gap filling without Torch: estimate marks in LUTs (file and byte forms), module features,
// random model variants, fill_entry and the sum rule by hand, module sample sets, and the scenario
// key luts_fill (a run refuses estimated entries unless it allows them).
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>

#include "core/input_error.hpp"
#include "core/lut_fill.hpp"
#include "core/random_model_variant.hpp"
#include "core/module_features.hpp"
#include "io/h5_file.hpp"
#include "io/lut_codec.hpp"
#include "io/lut_h5.hpp"
#include "io/lut_repository.hpp"
#include "io/model_spec_loader.hpp"
#include "tests/unit/test_support.hpp"
#include "io/module_samples.hpp"
#include "io/scenario_loader.hpp"
#include "sched/scheduler_factory.hpp"

using namespace coinfer;
namespace fs = std::filesystem;

namespace {

using test::catalog;
std::string temp_dir() { return test::temp_dir("fill"); }

// A measured-looking table: stage s at batch b takes (s + 1) ms x b; ranges are the sum + 1 ms.
LutTable measured_table(const std::string& device, int n = 3, int B = 2) {
  LutTable t({device, "m", "d"}, n, B);
  for (int i = 0; i < n; ++i)
    for (int j = i + 1; j <= n; ++j)
      for (int b = 1; b <= B; ++b) {
        double s = 0;
        for (int k = i; k < j; ++k) s += (k + 1) * 1e-3 * b;
        if (j - i > 1) s += 1e-3;
        t.set_latency(i, j, b, {s, s, s, 0, 3});
      }
  t.provenance().kind = "measured";
  t.provenance().attributes = {{"cores", "2"}, {"cpu_cap_cores", "0.3"}, {"threads", "1 (torch=1 openblas=1)"}};
  return t;
}

}  // namespace

TEST(LutEstimate, MarksRoundTripThroughFileAndBytesAndNeedSchemaThree) {
  LutTable t = measured_table("dev");
  t.set_estimate(0, 2, 1, {"sum of stages: edgeconv=medn", 0.125});
  t.set_estimate(1, 2, 2, {"lr", 0.05});
  EXPECT_EQ(t.estimated_entries(), 2);
  const std::string dir = temp_dir();
  write_lut_file(dir + "/a.h5", {t});
  EXPECT_EQ(lut_file_schema_version(dir + "/a.h5"), 3);  // estimates need a reader that knows them
  for (const LutTable& r : {read_lut_file(dir + "/a.h5").at(0), decode_lut_tables(encode_lut_tables({t})).at(0)}) {
    ASSERT_EQ(r.estimated_entries(), 2);
    ASSERT_NE(r.estimate(0, 2, 1), nullptr);
    EXPECT_EQ(r.estimate(0, 2, 1)->method, "sum of stages: edgeconv=medn");
    EXPECT_DOUBLE_EQ(r.estimate(0, 2, 1)->relative_error, 0.125);
    EXPECT_EQ(r.estimate(1, 2, 2)->method, "lr");
    EXPECT_EQ(r.estimate(0, 1, 1), nullptr);  // measured entries carry no mark
  }
  write_lut_file(dir + "/b.h5", {measured_table("dev")});
  EXPECT_EQ(lut_file_schema_version(dir + "/b.h5"), 2);  // nothing estimated: older readers still read it
  fs::remove_all(dir);
}

TEST(LutEstimate, BadMarksAreRefused) {
  LutTable t = measured_table("dev");
  EXPECT_THROW(t.set_estimate(0, 1, 1, {"", 0.1}), std::invalid_argument);
  EXPECT_THROW(t.set_estimate(0, 1, 1, {"lr", -0.1}), std::invalid_argument);
  EXPECT_THROW(t.set_estimate(0, 1, 1, {"lr", NAN}), std::invalid_argument);
  LutTable empty({"dev", "m", "d"}, 2, 1);
  EXPECT_THROW(empty.set_estimate(0, 1, 1, {"lr", 0.1}), std::invalid_argument);  // no latency to mark
  // A file declaring schema 2 with estimate datasets is refused: schema 2 readers would take them for measurements.
  const std::string dir = temp_dir();
  t.set_estimate(0, 1, 1, {"lr", 0.1});
  write_lut_file(dir + "/a.h5", {t});
  // Rewrite the version attribute in place.
  {
    hid_t fid = H5Fopen((dir + "/a.h5").c_str(), H5F_ACC_RDWR, H5P_DEFAULT);
    hid_t attr = H5Aopen(fid, "schema_version", H5P_DEFAULT);
    const std::int64_t two = 2;
    H5Awrite(attr, H5T_NATIVE_INT64, &two);
    H5Aclose(attr);
    H5Fclose(fid);
  }
  try {
    read_lut_file(dir + "/a.h5");
    FAIL() << "schema 2 with estimates was accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("schema 3"), std::string::npos) << e.what();
  }
  fs::remove_all(dir);
}

TEST(LutEstimate, WithMaxBatchKeepsEverythingAndAddsEmptyBatches) {
  LutTable t = measured_table("dev");
  t.set_quantile_levels({0, 1});
  t.set_quantiles(0, 1, 1, {0.9e-3, 1.1e-3});
  t.set_estimate(1, 3, 2, {"lr", 0.2});
  t.set_peak_memory(0, 3, 1234);
  t.bytes_per_split() = {1, 2, 3, 4};
  const LutTable w = t.with_max_batch(5);
  EXPECT_EQ(w.max_batch(), 5);
  EXPECT_DOUBLE_EQ(w.mean_seconds(0, 3, 2), t.mean_seconds(0, 3, 2));
  EXPECT_FALSE(w.has_latency(0, 3, 3));
  EXPECT_EQ(w.estimate(1, 3, 2)->method, "lr");
  EXPECT_DOUBLE_EQ(w.quantiles(0, 1, 1)[1], 1.1e-3);
  EXPECT_EQ(*w.peak_memory(0, 3), 1234);
  EXPECT_EQ(w.bytes_per_split(), t.bytes_per_split());
  EXPECT_EQ(w.provenance().kind, "measured");
  EXPECT_THROW(t.with_max_batch(1), std::invalid_argument);
}

TEST(ModuleFeatures, ValuesOfAStageByHand) {
  const ModelSpec m = catalog().instantiate("dgcnn", "modelnet40");
  const MeasurableParams hw = measurable_params_of(measured_table("dev").provenance());
  EXPECT_DOUBLE_EQ(hw.cpu_cores, 0.3);  // the cap, not the machine's 2 cores
  EXPECT_DOUBLE_EQ(hw.threads, 1);
  const auto f = module_features(m, 1, 4, hw);  // edgeconv2 (64 -> 64, k 20) at batch 4
  ASSERT_EQ(f.size(), module_feature_names().size());
  EXPECT_EQ(f[0], 4);          // batch
  EXPECT_EQ(f[1], 1024);       // nodes
  EXPECT_EQ(f[2], 1024 * 20);  // edges of the KNN graph: N x k
  EXPECT_EQ(f[3], 64);         // in width
  EXPECT_EQ(f[4], 64);         // out width
  EXPECT_EQ(f[5], 20);         // k
  EXPECT_EQ(f[7], 0.3);
  EXPECT_DOUBLE_EQ(f[9], m.stages[1].flops * 4);       // FLOPs scale with the batch
  EXPECT_DOUBLE_EQ(f[10], m.stages[1].weight_bytes);   // weights do not
  EXPECT_DOUBLE_EQ(f[11], m.stages[0].out_bytes * 4);  // its input is edgeconv1's output
  Provenance bad;
  bad.attributes = {{"cores", "two"}, {"threads", "1"}};
  EXPECT_THROW(measurable_params_of(bad), std::invalid_argument);
  // Profiled under background load 0.5 (coinfer profile --background-load): half the 0.3-core cap left.
  Provenance loaded = measured_table("dev").provenance();
  loaded.attributes["background_load"] = "0.500000: other work took this share of the 0.3 capped cores";
  EXPECT_DOUBLE_EQ(measurable_params_of(loaded).cpu_cores, 0.15);
  loaded.attributes["background_load"] = "1.5";
  EXPECT_THROW(measurable_params_of(loaded), std::invalid_argument);
}

TEST(ModelVariants, EveryShippedModelVariesIntoARealisableSpecDeterministically) {
  // A search: 40 variants of every model on every dataset derive their costs, keep ops and wiring,
  // and (seed, index) names exactly one variant.
  for (const auto& name : catalog().model_names())
    for (const auto& ds : catalog().datasets_for(name)) {
      const ModelSpec base = catalog().instantiate(name, ds);
      for (std::uint64_t i = 0; i < 40; ++i) {
        const ModelSpec v = random_model_variant(base, 7, i);
        ASSERT_EQ(v.num_stages(), base.num_stages()) << name;
        EXPECT_GE(v.dataset.nodes, 4);
        for (int s = 0; s < v.num_stages(); ++s) {
          EXPECT_EQ(v.stages[s].op, base.stages[s].op);
          EXPECT_EQ(v.stages[s].inputs, base.stages[s].inputs);
          const std::string& op = base.stages[s].op;  // ops whose width the spec gives (others derive theirs)
          const bool given = op != "aggregate" && op != "pool" && op != "knn";
          if (given && base.stages[s].out_width != base.dataset.classes) {
            EXPECT_EQ(v.stages[s].out_width % 8, 0) << name << " stage " << s;
          }
        }
        const ModelSpec again = random_model_variant(base, 7, i);
        EXPECT_EQ(again.dataset.nodes, v.dataset.nodes);
        EXPECT_EQ(again.stages.back().flops, v.stages.back().flops);
      }
      // Another seed, another variant: another size (a windowed transformer keeps its image's side, so
      // its first stage's cost differs instead).
      const ModelSpec v7 = random_model_variant(base, 7, 0), v8 = random_model_variant(base, 8, 0);
      EXPECT_TRUE(v7.dataset.nodes != v8.dataset.nodes || v7.stages[0].flops != v8.stages[0].flops) << name << "/" << ds;
    }
}

TEST(LutFill, EntryIsTheSumOfMeasuredAndPredictedStagesWithWeightedError) {
  const ModelSpec spec = catalog().instantiate("dgcnn", "modelnet40");  // 9 stages
  LutTable t({"dev", "dgcnn", "modelnet40"}, 9, 1);
  t.set_latency(0, 1, 1, {0.010, 0.010, 0.010, 0, 3});  // stage 0 measured: 10 ms
  t.provenance().kind = "measured";
  // Every other stage predicted at 2 ms with a 10 % error, edgeconvs by "medn", the rest by "lr".
  ModulePredictor predict = [](const ModelSpec& m, int s, int, const MeasurableParams&, const std::string&) -> std::optional<ModulePrediction> {
    return ModulePrediction{0.002, 0.10, m.stages[s].op == "edgeconv" ? "medn" : "lr"};
  };
  FillOutcome out;
  ASSERT_TRUE(fill_entry(t, spec, 0, 3, 1, {}, predict, 0.05, out));
  // 10 + 2 + 2 = 14 ms; error = (2 x 2 ms x 10 %) / 14 ms + the sum rule's 5 % = 0.0286 + 0.05.
  EXPECT_DOUBLE_EQ(t.mean_seconds(0, 3, 1), 0.014);
  EXPECT_NEAR(t.estimate(0, 3, 1)->relative_error, 0.4 / 14 + 0.05, 1e-12);
  EXPECT_EQ(t.estimate(0, 3, 1)->method, "sum of stages: 1 measured, edgeconv=medn");
  EXPECT_EQ(t.latency(0, 3, 1).count, 0);  // not a measurement
  // A single stage: no sum rule error.
  ASSERT_TRUE(fill_entry(t, spec, 5, 6, 1, {}, predict, 0.05, out));
  EXPECT_DOUBLE_EQ(t.estimate(5, 6, 1)->relative_error, 0.10);
  EXPECT_EQ(t.estimate(5, 6, 1)->method, "pool=lr");
  // Present entries are left alone; a stage without a regressor makes the entry unfillable.
  ASSERT_TRUE(fill_entry(t, spec, 0, 1, 1, {}, predict, 0.05, out));
  EXPECT_EQ(t.estimate(0, 1, 1), nullptr);
  ModulePredictor none = [](const ModelSpec&, int, int, const MeasurableParams&, const std::string&) { return std::optional<ModulePrediction>{}; };
  EXPECT_FALSE(fill_entry(t, spec, 6, 9, 1, {}, none, 0.05, out));
  EXPECT_FALSE(t.has_latency(6, 9, 1));
  ASSERT_EQ(out.unfillable.size(), 1u);
  EXPECT_NE(out.unfillable[0].find("op fc"), std::string::npos) << out.unfillable[0];
  EXPECT_EQ(out.filled, 2);
}

TEST(LutFill, AnchoredScalingIsBoundedByWhatBatchingCanDo) {
  // Batch ratio bounds by hand: 4 -> 7 may grow by 1..ceil(7/4) = 2; 7 -> 4 shrink by 1/2..1;
  // 4 -> 1 shrink by 1/4..1; 3 -> 3 exactly 1.
  EXPECT_EQ(batch_ratio_lower(4, 7), 1);
  EXPECT_EQ(batch_ratio_upper(4, 7), 2);
  EXPECT_EQ(batch_ratio_lower(7, 4), 0.5);
  EXPECT_EQ(batch_ratio_upper(7, 4), 1);
  EXPECT_EQ(batch_ratio_lower(4, 1), 0.25);
  EXPECT_EQ(batch_ratio_upper(3, 3), 1);
  EXPECT_EQ(batch_ratio_lower(3, 3), 1);
  const ModelSpec spec = catalog().instantiate("dgcnn", "modelnet40");
  LutTable t({"dev", "dgcnn", "modelnet40"}, 9, 8);
  t.set_latency(0, 1, 4, {0.010, 0.010, 0.010, 0, 3});  // stage 0 measured at batch 4 only: 10 ms
  t.provenance().kind = "measured";
  // A regressor extrapolating wildly: 1 s x 10^(batch - 4) (the CI failure: a 10^4 scaling from 4 to 7).
  ModulePredictor wild = [](const ModelSpec&, int, int b, const MeasurableParams&, const std::string&) -> std::optional<ModulePrediction> {
    return ModulePrediction{std::pow(10.0, b - 4), 0.1, "lr"};
  };
  FillOutcome out;
  ASSERT_TRUE(fill_entry(t, spec, 0, 1, 7, {}, wild, 0, out));
  EXPECT_DOUBLE_EQ(t.mean_seconds(0, 1, 7), 0.020);  // 10 ms x at most 2
  EXPECT_EQ(t.estimate(0, 1, 7)->method, "edgeconv=lr scaling batch 4 (bounded)");
  ASSERT_TRUE(fill_entry(t, spec, 0, 1, 1, {}, wild, 0, out));
  EXPECT_DOUBLE_EQ(t.mean_seconds(0, 1, 1), 0.0025);  // 10^-3 ratio, bounded at 1/4: 2.5 ms
  // A ratio inside the bounds is kept as predicted: 1.5 from batch 4 to 6 -> 15 ms, not marked.
  ModulePredictor mild = [](const ModelSpec&, int, int b, const MeasurableParams&, const std::string&) -> std::optional<ModulePrediction> {
    return ModulePrediction{b * 0.25, 0.1, "mlp"};
  };
  ASSERT_TRUE(fill_entry(t, spec, 0, 1, 6, {}, mild, 0, out));
  EXPECT_DOUBLE_EQ(t.mean_seconds(0, 1, 6), 0.015);
  EXPECT_EQ(t.estimate(0, 1, 6)->method, "edgeconv=mlp scaling batch 4");
  // Unanchored (stage 1 was never measured) and beyond the LUT limit of a day: unfillable, nothing written.
  ModulePredictor huge = [](const ModelSpec&, int, int, const MeasurableParams&, const std::string&) -> std::optional<ModulePrediction> {
    return ModulePrediction{1e6, 0.1, "medn"};
  };
  EXPECT_FALSE(fill_entry(t, spec, 1, 2, 4, {}, huge, 0, out));
  EXPECT_FALSE(t.has_latency(1, 2, 4));
  ASSERT_EQ(out.unfillable.size(), 1u);
  EXPECT_NE(out.unfillable[0].find("medn predicts 1000000 s"), std::string::npos) << out.unfillable[0];
  // A sum of in-range stages beyond the limit is unfillable too: 9 stages x 0.6 day each.
  LutTable u({"dev", "dgcnn", "modelnet40"}, 9, 1);
  ModulePredictor long_stage = [](const ModelSpec&, int, int, const MeasurableParams&, const std::string&) -> std::optional<ModulePrediction> {
    return ModulePrediction{0.6 * 86400, 0.1, "lr"};
  };
  EXPECT_FALSE(fill_entry(u, spec, 0, 9, 1, {}, long_stage, 0, out));
  EXPECT_FALSE(u.has_latency(0, 9, 1));
  EXPECT_NE(out.unfillable.back().find("beyond the limit"), std::string::npos) << out.unfillable.back();
}

TEST(LutFill, SumRuleErrorComparesMeasuredRangesWithTheirStages) {
  // measured_table: ranges of two or more stages are their stages' sum + 1 ms. n = 3, B = 1:
  // [0,2) = 3 + 1 ms (error 1/4), [1,3) = 5 + 1 ms (1/6), [0,3) = 6 + 1 ms (1/7).
  LutTable t = measured_table("dev", 3, 1);
  EXPECT_NEAR(sum_rule_error({&t}), (1.0 / 4 + 1.0 / 6 + 1.0 / 7) / 3, 1e-12);
  LutTable synth = t;
  synth.provenance().kind = "synthesised";  // formulas are not evidence
  EXPECT_EQ(sum_rule_error({&synth}), 0);
}

TEST(ModuleSamples, RoundTripAndErrorsNameLineAndColumn) {
  const std::string dir = temp_dir();
  ModuleSampleSet set;
  set.provenance.kind = "measured";
  set.provenance.attributes = {{"cpu", "AMD, \"EPYC\""}, {"command", "coinfer profile --modules 3\nsecond line"}};
  const ModelSpec m = catalog().instantiate("gcn", "mr");
  for (int b = 1; b <= 3; ++b) set.samples.push_back({"gcn", "dev, x", "gcn/mr", "conv1", module_features(m, 0, b, {2, 1}), 1e-3 * b, 1e-3 * b, 5});
  write_module_samples(dir + "/s.csv", set);
  const ModuleSampleSet r = read_module_samples(dir + "/s.csv");
  ASSERT_EQ(r.samples.size(), 3u);
  EXPECT_EQ(r.samples[2].device_type, "dev, x");
  EXPECT_EQ(r.samples[2].features, set.samples[2].features);
  EXPECT_DOUBLE_EQ(r.samples[1].mean_s, 2e-3);
  EXPECT_EQ(r.provenance.attributes.at("cpu"), "AMD, \"EPYC\"");
  EXPECT_EQ(r.provenance.attributes.at("command"), "coinfer profile --modules 3 second line");
  // Bad values: each names the file, the line and the column.
  std::ifstream in(dir + "/s.csv");
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  auto expect_error = [&](const std::string& bad, const std::string& needle) {
    std::ofstream(dir + "/bad.csv") << bad;
    try {
      read_module_samples(dir + "/bad.csv");
      ADD_FAILURE() << "accepted: " << needle;
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find("bad.csv"), std::string::npos) << e.what();
    }
  };
  const size_t last = text.rfind("gcn,");
  std::string neg = text;
  neg.replace(neg.find(",0.003,", last), 7, ",-1,");
  expect_error(neg, "mean_s");
  expect_error(text.substr(text.find('\n') + 1), "not a coinfer module sample set");
  std::string nokind = text;
  nokind.replace(nokind.find("kind=measured"), 13, "kind=guessed");
  expect_error(nokind, "provenance");
  std::string nocol = text;
  nocol.replace(nocol.find(",workspace_bytes"), 16, "");
  expect_error(nocol, "workspace_bytes");
  expect_error(text + "gcn,dev,m,s,0.001\n", "fields");
  fs::remove_all(dir);
}

TEST(LutsFill, ARunRefusesEstimatedEntriesUnlessTheScenarioAllowsThem) {
  const std::string dir = temp_dir();
  // The shipped rpi4b and gtx1060 tables, with one server entry marked as estimated.
  LutSet shipped = load_luts({std::string(COINFER_SOURCE_DIR) + "/traces/lut/rpi4b.h5", std::string(COINFER_SOURCE_DIR) + "/traces/lut/gtx1060.h5"});
  std::vector<LutTable> gpu;
  for (const LutKey& k : shipped.keys())
    if (k.device_type == "gtx1060") {
      LutTable t = shipped.table(k);
      if (k.model == "dgcnn") t.set_estimate(2, t.num_stages(), 3, {"sum of stages: edgeconv=medn", 0.07});
      gpu.push_back(t);
    }
  fs::create_directories(dir + "/luts");
  write_lut_file(dir + "/luts/gtx1060.h5", gpu);
  fs::copy_file(std::string(COINFER_SOURCE_DIR) + "/traces/lut/rpi4b.h5", dir + "/luts/rpi4b.h5");
  const std::string yaml = "name: t\nduration_s: 5\nluts: [" + dir +
                           "/luts]\nservers:\n  - {id: e, type: gtx1060, batch: {window_ms: 10, max_size: 5}}\n"
                           "devices:\n  - {id: pi, type: rpi4b, model: dgcnn, dataset: modelnet40, link: {bandwidth_mbps: 10}, strategy: pp(2)}\n";
  std::ofstream(dir + "/s.yaml") << yaml;
  Scenario s = load_scenario(dir + "/s.yaml");
  EXPECT_EQ(s.luts_fill, Scenario::LutsFill::refuse);
  const LutSet luts = load_scenario_luts(s);
  try {
    check_scenario_against(s, catalog(), luts, scheduler_traits(s.scheduler.name));
    FAIL() << "an estimated entry was accepted without luts_fill: allow";
  } catch (const InputError& e) {
    EXPECT_EQ(e.key(), "luts_fill");
    EXPECT_NE(std::string(e.what()).find("[2,9) at batch 3 is estimated"), std::string::npos) << e.what();
  }
  Scenario allowed = load_scenario(dir + "/s.yaml", {"luts_fill=allow"});
  EXPECT_NO_THROW(check_scenario_against(allowed, catalog(), luts, scheduler_traits(allowed.scheduler.name)));
  const auto used = estimated_entries_used(allowed, catalog(), luts, scheduler_traits(allowed.scheduler.name));
  ASSERT_EQ(used.size(), 1u);
  EXPECT_EQ(used[0].begin, 2);
  EXPECT_EQ(used[0].batch, 3);
  // pp(3) never consults [2,9): nothing to refuse.
  const Scenario pp3 = load_scenario(dir + "/s.yaml", {"devices.0.strategy=pp(3)"});
  EXPECT_NO_THROW(check_scenario_against(pp3, catalog(), luts, scheduler_traits(pp3.scheduler.name)));
  EXPECT_THROW(load_scenario(dir + "/s.yaml", {"luts_fill=maybe"}), InputError);
  fs::remove_all(dir);
}
