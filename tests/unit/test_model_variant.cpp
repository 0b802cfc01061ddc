// Execution variants in core and io: names, support rules, the cost formulas by hand, the catalog's
// variant specs and the scenario's `variant` key with file, line and key in its errors.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "core/input_error.hpp"
#include "core/model_variant.hpp"
#include "core/operator_class.hpp"
#include "io/scenario_loader.hpp"
#include "sched/operator_placement.hpp"
#include "sched/scheduler_factory.hpp"
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

TEST(ModelVariant, UncachedAddsTheGraphPreprocessingToEveryStageByHand) {
  // gcn, sage and gat on mr: N = 17 nodes, E = 68 edges; with a self loop per node L = 85.
  const double N = 17, E = 68, L = E + N;
  const auto flops = [](const std::string& model, int stage) { return catalog().spec(model, "mr").stages[stage].flops; };
  const auto traffic = [](const std::string& model, int stage) { return catalog().spec(model, "mr").stages[stage].traffic_bytes; };
  // gcn: per edge with its loop, an add into the degree, two reciprocal square roots and their
  // product (GraNNite's Fig. 3 normalisation): 4 L, in both gcn layers, not in the pool or the head.
  for (int stage : {0, 1}) EXPECT_DOUBLE_EQ(flops("gcn@uncached", stage) - flops("gcn", stage), 4 * L) << stage;
  for (int stage : {2, 3}) EXPECT_DOUBLE_EQ(flops("gcn@uncached", stage), flops("gcn", stage)) << stage;
  // With the dense mask the weights are also put into the N x N matrix (an accumulating add each), and
  // the matrix is zeroed first: at least its N^2 floats are written in every run.
  EXPECT_DOUBLE_EQ(flops("gcn@dense_mask+uncached", 0) - flops("gcn@dense_mask", 0), 5 * L);
  EXPECT_GE(traffic("gcn@dense_mask+uncached", 0) - traffic("gcn@dense_mask", 0), N * N * 4);
  // Dense sage: an add per edge into the in-degree, its reciprocal per edge, an add per edge into the
  // matrix (no loops): 3 E. Dense gat: the 0/1 mask's accumulating put, loops included: L.
  EXPECT_DOUBLE_EQ(flops("sage@dense_mask+uncached", 0) - flops("sage@dense_mask", 0), 3 * E);
  EXPECT_DOUBLE_EQ(flops("gat@dense_mask+uncached", 0) - flops("gat@dense_mask", 0), L);
  // The preprocessing is listed among the stage's operators, classed (the irregular puts and adds).
  int irregular = 0;
  for (const OperatorCost& o : catalog().spec("gcn@dense_mask+uncached", "mr").stages[0].operators)
    irregular += o.cls == OperatorClass::irregular && o.what.find("index_put") != std::string::npos;
  EXPECT_EQ(irregular, 1);
  // Names: canonical beside the others, exclusive with cached and symmetric, and refused where it
  // changes nothing (sparse sage and gat make their loops and degrees in every run already).
  EXPECT_EQ(ModelVariant::parse("int8+uncached+dense_mask").name(), "dense_mask+uncached+int8");
  EXPECT_THROW(ModelVariant::parse("uncached+cached"), std::invalid_argument);
  EXPECT_THROW(ModelVariant::parse("symmetric+uncached"), std::invalid_argument);
  for (const std::string model : {"sage@uncached", "gat@uncached"}) {
    try {
      catalog().spec(model, "mr");
      ADD_FAILURE() << model;
    } catch (const std::exception& e) {
      EXPECT_NE(std::string(e.what()).find("already make their self loops"), std::string::npos) << e.what();
    }
  }
}

TEST(ModelCost, AGraphPrepStageMakesTheMatrixTheGcnLayersTakeAsAnInput) {
  // gcn_grad on cora: N = 2,708 nodes, E = 10,858 edges, L = E + N = 13,566 with the self loops;
  // prep, then conv1 (1,433 -> 64) and conv2 (64 -> 7) reading prep's matrix.
  const ModelSpec& g = catalog().spec("gcn_grad", "cora");
  const ModelSpec& d = catalog().spec("gcn@dense_mask", "cora");
  const double N = 2708, E = 10858, L = E + N, F = 1433;
  ASSERT_EQ(g.num_stages(), 3);
  // Per edge with its loop: an add into the degree, two reciprocal square roots, their product, the
  // accumulating put into the N x N matrix; the matrix (float32) is the stage's output.
  EXPECT_DOUBLE_EQ(g.stages[0].flops, 5 * L);
  EXPECT_DOUBLE_EQ(g.stages[0].out_bytes, N * N * 4);
  // The layers cost what gcn@dense_mask's do, with no mask of their own to keep (it is their input).
  EXPECT_DOUBLE_EQ(g.stages[1].flops, d.stages[0].flops);
  EXPECT_DOUBLE_EQ(g.stages[2].flops, d.stages[1].flops);
  EXPECT_DOUBLE_EQ(g.stages[1].workspace_bytes, 0);
  // After prep: the raw features, the matrix and the graph cross; after conv1: its output and the
  // matrix (conv2 reads both) and the graph (conv2 needs it); E edges of two int64 each.
  EXPECT_DOUBLE_EQ(g.bytes_at_split(1), N * F * 4 + N * N * 4 + E * 16);
  EXPECT_DOUBLE_EQ(g.bytes_at_split(2), N * 64 * 4 + N * N * 4 + E * 16);
  // `uncached` changes nothing: the layers take the matrix prep made in this run.
  EXPECT_DOUBLE_EQ(catalog().spec("gcn_grad@uncached", "cora").stages[1].flops, g.stages[1].flops);
  // GraphSplit puts the preprocessing on the CPU and the layers (dense products) on the accelerator.
  EXPECT_TRUE(irregular_stage(g, 0));
  EXPECT_FALSE(irregular_stage(g, 1));
  EXPECT_FALSE(irregular_stage(g, 2));
  // Its operators are the preprocessing's, the irregular degree count and put among them.
  int irregular = 0;
  for (const OperatorCost& o : g.stages[0].operators) irregular += o.cls == OperatorClass::irregular;
  EXPECT_EQ(irregular, 3);  // degree index_add, index_select of both ends, the put
}

TEST(ModelCost, AStagesMemoryIsTheTensorsItsImplementationHoldsAtOnce) {
  // What models/gnn_model.cpp allocates, phase by phase, per sample (bench/memory_formula.py measured
  // these within 1 % of LibTorch's allocator). Worked by hand from the specs' sizes.
  // gcode's knn on modelnet40 (N = 1024 points, k = 20): the distance expression's four N x N floats,
  // topk's values (N k floats) and its output indices (N k int64).
  const ModelSpec& gcode = catalog().spec("gcode", "modelnet40");
  const double P = 1024, K = P * 20;
  EXPECT_DOUBLE_EQ(gcode.stages[0].memory_bytes, 4 * P * P * 4 + K * 4 + K * 8);
  // DGCNN's edgeconv1 (3 -> 64): its KNN phase (4 N^2 floats + topk's K floats and K indices) outgrows
  // the edge MLP's (K x (4 x 3 + 64) floats); edgeconv4 (128 -> 256): the MLP's, K x (4 x 128 + 256).
  const ModelSpec& dgcnn = catalog().spec("dgcnn", "modelnet40");
  EXPECT_DOUBLE_EQ(dgcnn.stages[0].memory_bytes, 4 * P * P * 4 + K * 12);
  EXPECT_DOUBLE_EQ(dgcnn.stages[3].memory_bytes, K * (4 * 128 + 256) * 4);
  // DGCNN's embed (linear 512 -> 1024 over N rows, four inputs concatenated): the concatenation, the
  // pre-activation and the output.
  EXPECT_DOUBLE_EQ(dgcnn.stages[4].memory_bytes, P * 512 * 4 + 2 * P * 1024 * 4);
  // gat conv1 on siot (N = 16216, E = 292234, 52 -> 8 heads x 8): the edge indices with self loops
  // (2 x (E + N) int64), the transformed rows and accumulator (2 x N x 64), scores, exponentials and
  // attention ((E + N) x 8 each), the gathered messages and their weighted copy (2 x (E + N) x 64).
  const double N = 16216, L = 292234 + N;
  EXPECT_DOUBLE_EQ(catalog().spec("gat", "siot").stages[0].memory_bytes, 2 * L * 8 + 2 * N * 64 * 4 + 3 * L * 8 * 4 + 2 * L * 64 * 4);
}

TEST(ModelVariant, FeatureDecompositionShrinksTheGatheredMessagesInPeakMemory) {
  // gcn on siot: N = 16216, E = 292234, 52 features, conv1 52 -> 64, conv2 64 -> 2 (node task).
  const double N = 16216, E = 292234, in = 52, hid = 64;
  const ModelSpec& base = catalog().spec("gcn", "siot");
  const ModelSpec& fd4 = catalog().spec("gcn@fd4", "siot");
  // conv1 gathers its transformed features per edge and self loop ((E + N) x 64 floats) and makes their
  // normalised copy while they live (models/gnn_model.cpp aggregate_messages): 2 (E + N) x 64 floats
  // at once, a quarter with fd4.
  // fd4 also holds one slice of the transformed rows made contiguous and that slice's sums before they
  // are copied into the result (models/aggregation_schemes.cpp): 2 x N x 64 / 4 floats.
  const double msg = 2 * (E + N) * hid * 4;
  const double slice = 2 * N * hid * 4 / 4;
  EXPECT_DOUBLE_EQ(base.stages[0].message_bytes, msg);
  EXPECT_DOUBLE_EQ(fd4.stages[0].message_bytes, msg / 4 + slice);
  // conv1 alone: weights (52 x 64 + bias) + input (N x 52) + the graph, live; then what it allocates:
  // the transformed rows and the accumulator (2 x N x 64 floats) beside the messages (larger than the
  // bias-and-activation phase's 3 x N x 64), and the normalisation cached per graph ((E + N) x (two
  // int64 indices + a float weight)).
  const double live = in * hid * 4 + 64 * 4 + N * in * 4 + base.graph_bytes;
  const double cache = (E + N) * 20;
  EXPECT_DOUBLE_EQ(base.peak_memory_bytes(0, 1), live + 2 * N * hid * 4 + msg + cache);
  EXPECT_DOUBLE_EQ(fd4.peak_memory_bytes(0, 1), live + 2 * N * hid * 4 + msg / 4 + slice + cache);
  // Decomposition trades no FLOPs.
  EXPECT_DOUBLE_EQ(fd4.stages[0].flops, base.stages[0].flops);
  // Its traffic: three more passes over the edge list with self loops, each reading a source and a
  // destination index (8 bytes each) and a weight (4 bytes) per edge: 3 x (E + N) x 20 bytes more.
  EXPECT_DOUBLE_EQ(fd4.stages[0].traffic_bytes, base.stages[0].traffic_bytes + 3 * (E + N) * 20);
  // So P = 2, 4, 8 are no longer one time: more slices, more edge traffic.
  EXPECT_LT(catalog().spec("gcn@fd2", "siot").stages[0].traffic_bytes, fd4.stages[0].traffic_bytes);
  EXPECT_LT(fd4.stages[0].traffic_bytes, catalog().spec("gcn@fd8", "siot").stages[0].traffic_bytes);
  EXPECT_EQ(ModelVariant::parse("fd=8+int8").name(), "int8+fd8");
  EXPECT_THROW(ModelVariant::parse("fd0"), std::invalid_argument);
  EXPECT_THROW(ModelVariant::parse("fd4+fd8"), std::invalid_argument);
  EXPECT_THROW(catalog().spec("dgcnn@fd4", "modelnet40"), InputError);   // no sparse aggregation to slice
  EXPECT_THROW(catalog().spec("gcn@dense_mask+fd4", "mr"), InputError);  // a dense mask gathers nothing
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
  EXPECT_NE(why("gcn@grasp", "mr").find("needs gcn or sage stages with dense_mask, or a graph_prep stage"), std::string::npos);
  EXPECT_NE(why("gat@dense_mask+grasp", "mr").find("needs gcn or sage stages with dense_mask"), std::string::npos);
  EXPECT_NE(why("gcn@dense_mask+grasp+int8", "mr").find("takes no sparse operand"), std::string::npos);
  EXPECT_EQ(catalog().spec("gcn@grasp+dense_mask", "mr").name, "gcn@dense_mask+grasp");
  EXPECT_EQ(catalog().spec("gcn_grad@grasp+cap3000", "cora").name, "gcn_grad@cap3000+grasp");
  EXPECT_NE(why("gat@select_mask", "mr").find("needs gat stages and dense_mask"), std::string::npos);
  EXPECT_NE(why("gcn@dense_mask+select_mask", "mr").find("needs gat stages and dense_mask"), std::string::npos);
  EXPECT_NE(why("gat@dense_mask+select_mask+grax1", "mr").find("name one"), std::string::npos);
  EXPECT_EQ(catalog().spec("gat@select_mask+uncached+dense_mask", "mr").name, "gat@dense_mask+uncached+select_mask");
  EXPECT_NE(why("gcn@dense_mask+symmetric", "mr").find("sparse aggregation only"), std::string::npos);
  EXPECT_NE(why("gcn@int9", "mr").find("unknown variant part 'int9'"), std::string::npos);
  EXPECT_NE(why("nope@int8", "mr").find("unknown model 'nope'"), std::string::npos);
}

namespace {
std::string scenario_with(const std::string& device_lines) {
  const std::string dir = coinfer::test::temp_dir("variant");
  std::ofstream(dir + "/s.yaml") << "name: t\nseed: 1\nduration_s: 5\nluts: [" << COINFER_SOURCE_DIR
                                 << "/traces/lut]\nservers:\n  - {id: e, type: gtx1060}\n"
                                    "devices:\n  - id: d\n    type: rpi4b\n    dataset: mr\n    link: {bandwidth_mbps: 10}\n"
                                 << device_lines;
  return dir + "/s.yaml";
}
InputError scenario_error(const std::string& device_lines) {
  try {
    Scenario s = load_scenario(scenario_with(device_lines));
    LutSet none;
    check_scenario_against(s, catalog(), none, scheduler_traits(s.scheduler.name));
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
  EXPECT_EQ(load_scenario(scenario_with("    model: gat\n    variant: {aggregation: dense_mask, normalisation: uncached, masking: select}\n"))
                .devices[0]
                .model,
            "gat@dense_mask+uncached+select_mask");
  EXPECT_EQ(scenario_error("    model: gat\n    variant: {aggregation: dense_mask, masking: where}\n").key(), "devices[0].variant.masking");
  EXPECT_EQ(load_scenario(scenario_with("    model: gcn\n    variant: {aggregation: dense_mask, sparsity: bitmap}\n")).devices[0].model,
            "gcn@dense_mask+grasp");
  EXPECT_EQ(scenario_error("    model: gcn\n    variant: {aggregation: dense_mask, sparsity: zvc}\n").key(), "devices[0].variant.sparsity");
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

// ---- Variants as a scheduling dimension ----

#include "sched/dp_scheduler.hpp"
#include "sched/greedy_scheduler.hpp"
#include "sched/hierarchical_scheduler.hpp"
#include "sched_fixture.hpp"

namespace {
// A variant's table: the base table's times scaled by `factor`, with a documented output error.
LutTable variant_lut(const std::string& type, const std::string& model, double stage_s, double error, double scale) {
  LutTable base = coinfer::test::lut(type, stage_s);
  LutTable t({type, model, "modelnet40"}, 9, 8);
  for (int i = 0; i < 9; ++i)
    for (int j = i + 1; j <= 9; ++j)
      for (int b = 1; b <= 8; ++b) t.set_latency(i, j, b, base.latency(i, j, b));
  if (error >= 0) {
    t.provenance().attributes["output_mean_abs_error"] = std::to_string(error);
    t.provenance().attributes["output_mean_abs"] = std::to_string(scale);
  }
  return t;
}
}  // namespace

TEST(VariantChoice, StrategiesCarryAVariantAndNameTheModelTheyRun) {
  const Strategy s = parse_strategy("pp(2)@int8+dense_mask");
  EXPECT_EQ(s.split, 2);
  EXPECT_EQ(s.variant, "dense_mask+int8");
  EXPECT_EQ(s.to_string(), "pp(2)@dense_mask+int8");
  EXPECT_EQ(parse_strategy("local@fp32").variant, "fp32");
  EXPECT_EQ(parse_strategy("offload@sparse").variant, "fp32");  // the base, spelled another way
  EXPECT_NE(parse_strategy("offload@int8"), Strategy::offload());
  EXPECT_THROW(parse_strategy("offload@int4"), std::invalid_argument);
  EXPECT_EQ(model_under("gcn", Strategy::offload()), "gcn");
  EXPECT_EQ(model_under("gcn@int8", Strategy::offload()), "gcn@int8");  // no variant named: as configured
  EXPECT_EQ(model_under("gcn@int8", parse_strategy("offload@fp32")), "gcn");
  EXPECT_EQ(model_under("gcn", parse_strategy("offload@dense_mask")), "gcn@dense_mask");
}

TEST(VariantChoice, TheEstimatorRunsTheVariantsTablesAndGreedyTakesTheFasterVariant) {
  using namespace coinfer::test;
  LutSet luts;
  luts.add(lut("slow", 0.100), "mem");
  luts.add(lut("srv", 0.001), "mem");
  luts.add(variant_lut("slow", "dgcnn@int8", 0.050, 0.001, 0.05), "mem");  // twice as fast everywhere
  luts.add(variant_lut("srv", "dgcnn@int8", 0.0005, 0.001, 0.05), "mem");
  ModelSpecs specs;
  specs.emplace(ModelKey{"dgcnn", "modelnet40"}, catalog().spec("dgcnn", "modelnet40"));
  specs.emplace(ModelKey{"dgcnn@int8", "modelnet40"}, catalog().spec("dgcnn@int8", "modelnet40"));
  AnalyticEstimator est(luts, specs, Objective::latency);
  DeviceState d = device("a", "slow", 8);
  // offload@int8 at 8 Mbit/s (1e6 B/s): the raw input (12288 B: float32 in every variant) up, the
  // int8 server [0,9) in 4.5 ms, the float32 result (160 B) down.
  Prediction p = est.predict(state({d}), scheme({{"a", parse_strategy("offload@int8")}}));
  EXPECT_NEAR(p.devices[0].latency_s, 0.012288 + 0.0045 + 0.00016, 1e-9);
  // pp(6)@int8 sends stage 5's int8 output: the int8 spec's bytes, a quarter of float32's plus 8.
  const double int8_bytes = catalog().spec("dgcnn@int8", "modelnet40").bytes_at_split(6);
  EXPECT_LT(int8_bytes, 0.3 * catalog().spec("dgcnn", "modelnet40").bytes_at_split(6));
  Prediction pp = est.predict(state({d}), scheme({{"a", parse_strategy("pp(6)@int8")}}));
  EXPECT_NEAR(pp.devices[0].latency_s, 6 * 0.05 + int8_bytes / 1e6 + 3 * 0.0005 + 0.00016, 1e-9);
  // Without choices greedy keeps to the base model; with them it takes the int8 offload.
  GreedyScheduler without(est);
  EXPECT_EQ(without.decide(state({d})).strategies.at("a").to_string(), "offload");
  d.variant_choices = {"fp32", "int8"};
  GreedyScheduler with(est);
  EXPECT_EQ(with.decide(state({d})).strategies.at("a").to_string(), "offload@int8");
  HierarchicalScheduler hierarchical(est);
  EXPECT_EQ(hierarchical.decide(state({d})).strategies.at("a").variant, "int8");
  // dp maximises throughput (data_parallel's two paths here), with the faster variant too.
  DpScheduler dp(est);
  EXPECT_EQ(dp.decide(state({d})).strategies.at("a").variant, "int8");
}

TEST(VariantChoice, OnlyVariantsWithCompleteTablesAndADocumentedErrorWithinTheBoundAreOffered) {
  using namespace coinfer::test;
  const std::string dir = temp_dir("vchoice");
  std::ofstream(dir + "/s.yaml") << "name: t\nluts: [" << COINFER_SOURCE_DIR
                                 << "/traces/lut]\nservers:\n"
                                    "  - {id: e, type: srv, batch: {max_size: 4}}\n"
                                    "devices:\n  - {id: d, type: slow, model: dgcnn, dataset: modelnet40, link: {bandwidth_mbps: 8}}\n"
                                    "scheduler: {name: greedy, max_output_error: 0.05}\n";
  Scenario s = load_scenario(dir + "/s.yaml");
  EXPECT_DOUBLE_EQ(s.scheduler.max_output_error, 0.05);
  auto with = [&](double err, bool complete) {
    LutSet luts;
    luts.add(lut("slow", 0.100), "mem");
    luts.add(lut("srv", 0.001), "mem");
    luts.add(variant_lut("slow", "dgcnn@int8", 0.05, err, 0.05), "mem");
    LutTable srv = variant_lut("srv", "dgcnn@int8", 0.0005, err, 0.05);
    if (!complete) srv = LutTable({"srv", "dgcnn@int8", "modelnet40"}, 9, 2);  // batch 1..2 < max_size 4
    luts.add(srv, "mem");
    Scenario c = s;
    const auto notes = resolve_variant_choices(c, catalog(), luts);
    std::string all;
    for (const auto& n : notes) all += n + "\n";
    return std::make_pair(c.devices[0].variant_choices, all);
  };
  // error 0.001 / 0.05 = 0.02 <= 0.05: offered next to the base.
  EXPECT_EQ(with(0.001, true).first, (std::vector<std::string>{"fp32", "int8"}));
  // 0.004 / 0.05 = 0.08 > 0.05: left out, and said why.
  auto above = with(0.004, true);
  EXPECT_EQ(above.first, (std::vector<std::string>{"fp32"}));
  EXPECT_NE(above.second.find("output error 0.08 above max_output_error 0.05"), std::string::npos) << above.second;
  // Undocumented error (a synthesised table): not offered.
  EXPECT_NE(with(-1, true).second.find("documents no output error"), std::string::npos);
  // A server table that cannot serve a batch of 4: not offered.
  EXPECT_NE(with(0.001, false).second.find("lack entries"), std::string::npos);
  // The key is checked: a negative bound is an error naming it. (`luts: [x]` names an empty folder
  // beside the scenario: it must exist, and nothing here reads it.)
  std::filesystem::create_directories(dir + "/x");
  std::ofstream(dir + "/bad.yaml") << "name: t\nluts: [x]\nservers: [{id: e, type: srv}]\n"
                                      "devices: [{id: d, type: slow, model: dgcnn, dataset: modelnet40, link: {bandwidth_mbps: 8}}]\n"
                                      "scheduler: {name: greedy, max_output_error: -1}\n";
  try {
    load_scenario(dir + "/bad.yaml");
    ADD_FAILURE();
  } catch (const InputError& e) {
    EXPECT_EQ(e.key(), "scheduler.max_output_error");
  }
  // A strategy naming a variant folds into the model.
  std::ofstream(dir + "/fold.yaml") << "name: t\nluts: [x]\nservers: [{id: e, type: srv}]\n"
                                       "devices: [{id: d, type: slow, model: gcn, dataset: mr, link: {bandwidth_mbps: 8}, strategy: pp(1)@int8}]\n";
  Scenario f = load_scenario(dir + "/fold.yaml");
  EXPECT_EQ(f.devices[0].model, "gcn@int8");
  EXPECT_EQ(f.devices[0].strategy.to_string(), "pp(1)");
}
