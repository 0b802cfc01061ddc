// Execution variants in core and io: names, support rules, the cost formulas by hand, the catalog's
// variant specs and the scenario's `variant` key with file, line and key in its errors.
#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>

#include "core/input_error.hpp"
#include "core/model_variant.hpp"
#include "io/scenario_loader.hpp"
#include "test_support.hpp"

using namespace coinfer;
using coinfer::test::catalog;

TEST(ModelVariant, NamesAreCanonicalAndBadPartsAreNamed) {
  EXPECT_EQ(ModelVariant::parse("int8+dense_mask").name(), "dense_mask+int8");
  EXPECT_EQ(ModelVariant::parse("cap=64+symmetric").name(), "cap64+symmetric");
  EXPECT_EQ(ModelVariant::parse("sparse+fp32+cached").name(), "");
  EXPECT_TRUE(ModelVariant::parse("").is_default());
  EXPECT_EQ(variant_model_name("gcn", ModelVariant::parse("int8")), "gcn@int8");
  EXPECT_EQ(split_variant_name("gcn@int8").first, "gcn");
  for (const std::string bad : {"int4", "int8+", "cap0", "cap-3", "capx", "int8+int8", "int8+fp32", "cap12+cap13", "cap999999999"}) {
    try {
      ModelVariant::parse(bad);
      ADD_FAILURE() << bad;
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()), "") << bad;
    }
  }
  try {
    ModelVariant::parse("int4");
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("allowed parts: dense_mask"), std::string::npos) << e.what();
  }
}

TEST(ModelVariant, CostsByHand) {
  // gcn on mr: N = 17 nodes, E = 68 edges, 300 features, conv1 300 -> 64.
  const ModelSpec& base = catalog().spec("gcn", "mr");
  const ModelSpec& dense = catalog().spec("gcn@dense_mask", "mr");
  const double N = 17, E = 68, in = 300, out = 64;
  EXPECT_DOUBLE_EQ(base.stages[0].flops, N * in * out * 2 + E * out * 2);
  EXPECT_DOUBLE_EQ(dense.stages[0].flops, N * in * out * 2 + N * N * out * 2);  // StaGr: N x N by N x out
  EXPECT_DOUBLE_EQ(dense.stages[0].workspace_bytes, N * N * 4);                 // the mask
  // Node capacity 64: every node-level row count is 64 (the padding is computed and sent).
  const ModelSpec& cap = catalog().spec("gcn@cap64", "mr");
  EXPECT_DOUBLE_EQ(cap.stages[0].flops, 64 * in * out * 2 + E * out * 2);
  EXPECT_DOUBLE_EQ(cap.input_bytes, 64 * in * 4);
  EXPECT_DOUBLE_EQ(cap.stages[0].out_bytes, 64 * out * 4);
  // INT8: conv1's output crosses as 17 x 64 int8 + 8 bytes of scale and zero point; the result
  // (the head's logits) stays float32; weights a quarter plus a float scale per output channel.
  const ModelSpec& q = catalog().spec("gcn@int8", "mr");
  EXPECT_DOUBLE_EQ(q.stages[0].out_bytes, N * out + 8);
  EXPECT_DOUBLE_EQ(q.stages.back().out_bytes, base.stages.back().out_bytes);
  EXPECT_DOUBLE_EQ(q.stages[0].weight_bytes, base.stages[0].weight_bytes / 4 + out * 4);
  EXPECT_DOUBLE_EQ(q.bytes_at_split(1), N * out + 8 + base.graph_bytes);
  // SymG halves the cached normalisation: E*4 -> E*2 bytes.
  EXPECT_DOUBLE_EQ(catalog().spec("gcn@symmetric", "mr").stages[0].workspace_bytes, E * 2);
}

TEST(ModelVariant, TheCatalogBuildsSupportedVariantsAndSaysWhyOthersAreNot) {
  EXPECT_EQ(catalog().spec("gcn@int8+dense_mask", "mr").name, "gcn@dense_mask+int8");
  EXPECT_EQ(catalog().spec("gcn@int8", "mr").variant.precision, ModelVariant::Precision::int8);
  EXPECT_EQ(&catalog().spec("gcn@int8", "mr"), &catalog().spec("gcn@int8", "mr"));  // built once
  EXPECT_TRUE(catalog().has_model("gcn@int8"));
  auto why = [](const std::string& model, const std::string& ds) -> std::string {
    try {
      catalog().spec(model, ds);
    } catch (const InputError& e) {
      return e.what();
    }
    return "";
  };
  EXPECT_NE(why("dgcnn@dense_mask", "modelnet40").find("point clouds"), std::string::npos);
  EXPECT_NE(why("gcn@cap10", "mr").find("node capacity 10 is below the 17 nodes per sample"), std::string::npos);
  EXPECT_NE(why("sage@symmetric", "mr").find("applies to gcn stages"), std::string::npos);
  EXPECT_NE(why("gcn@grax2", "mr").find("needs gat"), std::string::npos);
  EXPECT_NE(why("gat@grax1", "mr").find("dense_mask"), std::string::npos);
  EXPECT_NE(why("gcn@dense_mask+symmetric", "mr").find("sparse aggregation only"), std::string::npos);
  EXPECT_NE(why("gcn@int9", "mr").find("unknown variant part 'int9'"), std::string::npos);
  EXPECT_NE(why("nope@int8", "mr").find("unknown model 'nope'"), std::string::npos);
}

namespace {
std::string scenario_with(const std::string& device_lines) {
  char tmpl[] = "/tmp/coinfer-variant-XXXXXX";
  const std::string dir = mkdtemp(tmpl);
  std::ofstream(dir + "/s.yaml") << "name: t\nseed: 1\nduration_s: 5\nluts: [" << COINFER_SOURCE_DIR << "/traces/lut]\nservers:\n  - {id: e, type: gtx1060}\n"
                                    "devices:\n  - id: d\n    type: rpi4b\n    dataset: mr\n    link: {bandwidth_mbps: 10}\n"
                                 << device_lines;
  return dir + "/s.yaml";
}
InputError scenario_error(const std::string& device_lines) {
  try {
    Scenario s = load_scenario(scenario_with(device_lines));
    LutSet none;
    check_scenario_against(s, catalog(), none);
  } catch (const InputError& e) {
    return e;
  }
  ADD_FAILURE() << device_lines;
  return InputError("none");
}
}  // namespace

TEST(ModelVariant, ScenarioDevicesNameVariantsInEveryForm) {
  EXPECT_EQ(load_scenario(scenario_with("    model: gcn\n    variant: int8+dense_mask\n")).devices[0].model, "gcn@dense_mask+int8");
  EXPECT_EQ(load_scenario(scenario_with("    model: gcn@int8\n")).devices[0].model, "gcn@int8");
  EXPECT_EQ(load_scenario(scenario_with("    model: gat\n    variant: {aggregation: dense_mask, precision: int8, node_capacity: 64, "
                                        "approximations: [grax1, grax2]}\n"))
                .devices[0]
                .model,
            "gat@dense_mask+cap64+int8+grax1+grax2");
  // Errors name the line and the key.
  InputError e = scenario_error("    model: gcn\n    variant: {precision: int4}\n");
  EXPECT_EQ(e.key(), "devices[0].variant.precision");
  EXPECT_EQ(e.where().line, 13);
  EXPECT_NE(std::string(e.what()).find("fp32, int8"), std::string::npos) << e.what();
  EXPECT_EQ(scenario_error("    model: gcn\n    variant: {node_capacity: 0}\n").key(), "devices[0].variant.node_capacity");
  EXPECT_EQ(scenario_error("    model: gcn\n    variant: {colour: red}\n").key(), "devices[0].variant.colour");
  EXPECT_EQ(scenario_error("    model: gcn@int8\n    variant: int8\n").key(), "devices[0].variant");
  EXPECT_EQ(scenario_error("    model: gcn@int3\n").key(), "devices[0].model");
  // Supported or not is known against the catalog: a capacity below the dataset's nodes.
  InputError small = scenario_error("    model: gcn\n    variant: cap8\n");
  EXPECT_EQ(small.key(), "devices (id d).variant");
  EXPECT_NE(std::string(small.what()).find("below the 17 nodes"), std::string::npos) << small.what();
}
