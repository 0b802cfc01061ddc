// Operator classes: a stage's operators derived from its op (core/stage_operators.cpp), a processor's
// rates per class (traces/README.md "Operator classes"), the synthesis formula on them, the profile
// loader's checks, and a placement that follows the classes.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>

#include "core/input_error.hpp"
#include "core/lut_synth.hpp"
#include "io/device_profile_loader.hpp"
#include "sched/operator_placement.hpp"
#include "tests/unit/test_support.hpp"

using namespace coinfer;

namespace {

// A processor whose every class moves `gbps` and computes dense work at `dense_gflops`, `launch_us` per
// operator, no batching gain and no stage overhead.
ProcessorProfile class_processor(const std::string& name, double dense_gflops, double gbps, double launch_us) {
  ProcessorProfile p;
  p.name = name;
  p.kind = name == "cpu" ? "cpu" : "gpu";
  p.peak_gflops = dense_gflops;
  p.mem_gbps = gbps;
  ProcessorProfile::OperatorClasses oc;
  oc.launch_us = launch_us;
  oc.source = "test";
  for (auto& r : oc.rates) r.gbps = gbps;
  oc.rates[static_cast<int>(OperatorClass::dense)].gflops = dense_gflops;
  p.operator_classes = oc;
  return p;
}

// One combine stage (8 -> 4 features on 100 nodes) followed by max pooling.
ModelSpec combine_then_pool() {
  ModelSpec m;
  m.name = "t";
  m.dataset.name = "d";
  m.dataset.kind = "graph";
  m.dataset.task = "graph_classification";
  m.dataset.nodes = 100;
  m.dataset.features = 8;
  m.dataset.classes = 4;
  StageSpec c;
  c.name = "c";
  c.op = "combine";
  c.out_width = 4;
  StageSpec p;
  p.name = "p";
  p.op = "pool";
  p.pool_mode = "max";
  m.stages = {c, p};
  derive_costs(m);
  return m;
}

}  // namespace

TEST(OperatorClasses, AStagesOperatorsAndCostByHandOnATwoClassProcessor) {
  const ModelSpec m = combine_then_pool();
  const StageSpec& s = m.stages[0];
  // The combine stage is a Linear layer then a ReLU (it is not the last stage):
  //   linear: 2 x 100 rows x 8 x 4 = 6,400 FLOPs; reads 100 x 8 floats and the 8 x 4 weights and 4
  //           biases, writes 100 x 4: 4 B x (800 + 32 + 4 + 400) = 4,944 B;
  //   ReLU:   reads and writes 100 x 4 floats: 3,200 B, no FLOPs counted.
  ASSERT_EQ(s.operators.size(), 2u);
  EXPECT_EQ(s.operators[0].cls, OperatorClass::dense);
  EXPECT_DOUBLE_EQ(s.operators[0].flops, 6400);
  EXPECT_DOUBLE_EQ(s.operators[0].bytes, 4944);
  EXPECT_EQ(s.operators[1].cls, OperatorClass::elementwise);
  EXPECT_DOUBLE_EQ(s.operators[1].flops, 0);
  EXPECT_DOUBLE_EQ(s.operators[1].bytes, 3200);
  // Two classes with different rates: dense 1 GFLOP/s and 2 GB/s, element-wise 1 GB/s; 10 us per launch.
  ProcessorProfile p = class_processor("cpu", 1, 1, 10);
  p.operator_classes->rates[static_cast<int>(OperatorClass::dense)].gbps = 2;
  // linear: 10 us + max(6,400 / 1e9, 4,944 / 2e9) = 10 + 6.4 us; ReLU: 10 us + 3,200 / 1e9 = 13.2 us.
  EXPECT_NEAR(synth_stage_seconds(s, p, 1, 1), 29.6e-6, 1e-15);
  // At batch 3 with h = 1 the work (not the launches) scales by (3 + 1) / (1 + 1) = 2: 20 + 2 x 9.6 us.
  p.batch_half = 1;
  EXPECT_NEAR(synth_stage_seconds(s, p, 1, 3), 39.2e-6, 1e-15);
  // The stage overhead comes on top, once per stage: + 10 us.
  p.stage_overhead_ms = 0.01;
  EXPECT_NEAR(synth_stage_seconds(s, p, 1, 3), 49.2e-6, 1e-15);
  // The efficiency argument is the roofline's: unused here.
  EXPECT_NEAR(synth_stage_seconds(s, p, 0.01, 3), 49.2e-6, 1e-15);
  EXPECT_THROW(calibrate_efficiency(m, p, 1.0), std::invalid_argument);
}

TEST(OperatorClasses, BandwidthByBytesAndACostPerRowByHand) {
  // Element-wise bandwidth measured at two sizes: 10 GB/s at 1 MB (in cache), 2 GB/s at 100 MB.
  ProcessorProfile p = class_processor("cpu", 1, 1, 0);
  auto& ew = p.operator_classes->rates[static_cast<int>(OperatorClass::elementwise)];
  ew.gbps_by_bytes = {{1e6, 10}, {1e8, 2}};
  // Interpolated in log(bytes): 10 MB is half-way from 1 MB to 100 MB, so 10 + 0.5 x (2 - 10) = 6 GB/s;
  // below and above the points, the end points' rates.
  EXPECT_DOUBLE_EQ(ew.gbps_at(1e7), 6);
  EXPECT_DOUBLE_EQ(ew.gbps_at(1e3), 10);
  EXPECT_DOUBLE_EQ(ew.gbps_at(1e9), 2);
  OperatorCost add{OperatorClass::elementwise, "add", 0, 1e7, 1, 0};
  EXPECT_NEAR(operator_seconds(add, p, 1), 1e7 / 6e9, 1e-15);
  // A gather of 1,000 rows moving 1 MB at 1 GB/s, 2 ns a row on top: 1 ms + 2 us.
  auto& ir = p.operator_classes->rates[static_cast<int>(OperatorClass::irregular)];
  ir.ns_per_row = 2;
  OperatorCost gather{OperatorClass::irregular, "index_select", 0, 1e6, 1, 1000};
  EXPECT_NEAR(operator_seconds(gather, p, 1), 1e-3 + 2e-6, 1e-15);
}

TEST(OperatorClasses, TheOperatorsFlopsAreTheStagesForEveryShippedModelAndVariant) {
  const ModelCatalog& cat = test::catalog();
  int checked = 0;
  for (const std::string& model : cat.model_names())
    for (const std::string& dataset : cat.datasets_for(model))
      for (const std::string& variant : {"",
                                         "dense_mask",
                                         "fd4",
                                         "int8",
                                         "symmetric",
                                         "grax1",
                                         "grax2",
                                         "cap64",
                                         "dense_mask+int8",
                                         "uncached",
                                         "dense_mask+uncached",
                                         "dense_mask+select_mask",
                                         "dense_mask+uncached+select_mask",
                                         "dense_mask+grax2",
                                         "dense_mask+grax1+grax2",
                                         "dense_mask+select_mask+grax2",
                                         "dense_mask+grasp",
                                         "dense_mask+uncached+grasp",
                                         "grasp",
                                         "cap3000+grasp"}) {
        ModelSpec m;
        try {
          m = cat.instantiate(variant[0] ? model + "@" + variant : model, dataset);
        } catch (const std::exception&) {
          continue;  // a variant the model does not support
        }
        for (const StageSpec& s : m.stages) {
          ASSERT_FALSE(s.operators.empty()) << m.name << "/" << dataset << " " << s.name;
          double flops = 0;
          for (const OperatorCost& o : s.operators) {
            flops += o.flops;
            EXPECT_GE(o.flops, 0) << m.name << " " << s.name << " " << o.what;
            EXPECT_GT(o.bytes, 0) << m.name << " " << s.name << " " << o.what;
            EXPECT_GE(o.launches, 1) << m.name << " " << s.name << " " << o.what;
          }
          EXPECT_NEAR(flops, s.flops, 1e-9 * s.flops) << m.name << "/" << dataset << " " << s.name;
          ++checked;
        }
      }
  EXPECT_GT(checked, 100);
}

namespace {
// One graph layer (gat: 2 heads of 1 feature; gcn) with 2 output features, on 3 nodes, 2 edges and 1 input
// feature, run as `variant`.
ModelSpec tiny_graph_layer(const std::string& op, const std::string& variant) {
  ModelSpec m;
  m.name = "g";
  m.dataset = DatasetSpec{"t", "graph", "node_classification", 3, 2, 1, 2, "test"};
  StageSpec st;
  st.name = op;
  st.op = op;
  st.out_width = 2;
  if (op == "gat") st.heads = 2;
  m.stages = {st};
  m.variant = ModelVariant::parse(variant);
  derive_costs(m);
  return m;
}
const OperatorCost* find_op(const StageSpec& s, const std::string& what) {
  for (const OperatorCost& o : s.operators)
    if (o.what == what) return &o;
  return nullptr;
}
}  // namespace

TEST(OperatorClasses, GatsMaskingOutOfTheBoxWithEffOpAndWithGrAx2ByHand) {
  // H = 2 heads, N = 3 nodes: the logit map has H N^2 = 18 entries, the mask N^2 = 9.
  const StageSpec effop = tiny_graph_layer("gat", "dense_mask").stages[0];
  const StageSpec select = tiny_graph_layer("gat", "dense_mask+select_mask").stages[0];
  const StageSpec grax2 = tiny_graph_layer("gat", "dense_mask+grax2").stages[0];
  // EffOp (the default): the exponentials times the mask, element-wise: reads 18 + 9 floats, writes
  // 18: 4 x 45 = 180 B, 2 FLOPs a logit (36); the softmax's sums and divisions keep 2 a logit (36).
  const OperatorCost* mul = find_op(effop, "exp, mask");
  ASSERT_NE(mul, nullptr);
  EXPECT_EQ(mul->cls, OperatorClass::elementwise);
  EXPECT_DOUBLE_EQ(mul->bytes, 180);
  EXPECT_DOUBLE_EQ(mul->flops, 36);
  EXPECT_DOUBLE_EQ(find_op(effop, "softmax")->flops, 36);
  EXPECT_EQ(find_op(effop, "greater (mask > 0)"), nullptr);
  // Out of the box (GraNNite Fig. 12 left): Greater reads the 9 float mask, writes 9 one-byte
  // booleans (45 B); Select reads and writes the map (2 x 18 floats) and reads the booleans (the -inf
  // is a broadcast scalar): 4 x 36 + 9 = 153 B. Both are selection work without FLOPs; the plain
  // softmax does all 4 FLOPs a logit (72).
  const OperatorCost* gt = find_op(select, "greater (mask > 0)");
  const OperatorCost* where = find_op(select, "select (where): -inf on non-edges");
  ASSERT_NE(gt, nullptr);
  ASSERT_NE(where, nullptr);
  EXPECT_EQ(gt->cls, OperatorClass::select);
  EXPECT_EQ(where->cls, OperatorClass::select);
  EXPECT_DOUBLE_EQ(gt->bytes, 45);
  EXPECT_DOUBLE_EQ(where->bytes, 153);
  EXPECT_DOUBLE_EQ(find_op(select, "softmax")->flops, 72);
  EXPECT_EQ(find_op(select, "exp, mask"), nullptr);
  EXPECT_DOUBLE_EQ(select.flops, effop.flops);  // the same arithmetic, other operators
  // GrAx2: no broadcast add and LeakyReLU over the map (2 x 18 FLOPs, 4 x 36 B each way), one LeakyReLU
  // per source node and head instead (6 FLOPs, 4 x 12 = 48 B): 36 - 6 = 30 FLOPs fewer.
  EXPECT_NE(find_op(effop, "broadcast add, LeakyReLU"), nullptr);
  EXPECT_EQ(find_op(grax2, "broadcast add, LeakyReLU"), nullptr);
  const OperatorCost* per_source = find_op(grax2, "LeakyReLU per source (GrAx2)");
  ASSERT_NE(per_source, nullptr);
  EXPECT_DOUBLE_EQ(per_source->bytes, 48);
  EXPECT_DOUBLE_EQ(effop.flops - grax2.flops, 30);
  // On a processor whose selection is 10x slower than its element-wise work (an NPU's DSP against its
  // DPU), EffOp's layer is the faster: selection 198 B at 0.1 GB/s against 180 B element-wise at 1.
  ProcessorProfile p = class_processor("npu", 1, 1, 0);
  p.operator_classes->rates[static_cast<int>(OperatorClass::select)].gbps = 0.1;
  EXPECT_LT(synth_stage_seconds(effop, p, 1, 1), synth_stage_seconds(select, p, 1, 1));
  const double gap = synth_stage_seconds(select, p, 1, 1) - synth_stage_seconds(effop, p, 1, 1);
  // The two differ by the masking alone: 198 B / 0.1 GB/s - 180 B / 1 GB/s = 1,980 - 180 ns (the
  // softmax's bytes are equal; its FLOPs are priced by bandwidth on a non-dense class).
  EXPECT_NEAR(gap, 1800e-9, 1e-15);
}

TEST(OperatorClasses, GraSpMultipliesTheNonZerosOfTheGraphMatrixByHand) {
  // gcn with dense masks on 3 nodes and 2 edges, 1 feature in, 2 out: the normalised matrix has
  // E + N = 5 non-zeros (the edges and a self loop per node) of its 9 entries.
  auto with = [](const std::string& variant) { return tiny_graph_layer("gcn", variant).stages[0]; };
  const StageSpec dense = with("dense_mask"), grasp = with("dense_mask+grasp"), per_run = with("dense_mask+uncached+grasp");
  // Without GraSp the product is 2 x 9 x 2 = 36 FLOPs; with it 2 x 5 x 2 = 20: 16 fewer.
  EXPECT_DOUBLE_EQ(find_op(dense, "matmul mask x h")->flops, 36);
  const OperatorCost* sp = find_op(grasp, "sparse matmul (GraSp: zeros skipped)");
  ASSERT_NE(sp, nullptr);
  EXPECT_EQ(sp->cls, OperatorClass::dense);
  EXPECT_DOUBLE_EQ(sp->flops, 20);
  EXPECT_DOUBLE_EQ(dense.flops - grasp.flops, 16);
  // Its bytes: the 5 non-zeros as COO (two int64 indices and a float: 20 B each, 100 B) and the 3 x 2
  // features read and written (4 x 12 = 48 B).
  EXPECT_DOUBLE_EQ(sp->bytes, 148);
  // A kept mask is compressed once per graph; one made in every run is compressed in every run: read
  // whole (4 x 9 = 36 B), its non-zeros written (100 B).
  EXPECT_EQ(find_op(grasp, "compress the matrix (to_sparse)"), nullptr);
  const OperatorCost* compress = find_op(per_run, "compress the matrix (to_sparse)");
  ASSERT_NE(compress, nullptr);
  EXPECT_EQ(compress->cls, OperatorClass::movement);
  EXPECT_DOUBLE_EQ(compress->bytes, 136);
}

TEST(OperatorClasses, APlantedWrongClassChangesThePlacement) {
  // gcn on mr (conv1, conv2: gcn; pool; head: fc) on a board whose GPU computes dense work at 1,000
  // GFLOP/s and moves 100 GB/s in every class but the irregular one (0.01 GB/s: gathers and scatters
  // by index are what it is bad at), and whose CPU does 1 GFLOP/s and 10 GB/s in every class.
  // conv1's gather and scatter move ~75 KB: ~7.5 ms on the GPU, ~7.5 us on the CPU, against its
  // transform's 0.65 MFLOPs (0.65 ms on the CPU): both convolutions on the CPU; pooling and the head,
  // regular and small, on the GPU.
  const ModelSpec& m = test::catalog().spec("gcn", "mr");
  DeviceProfile board;
  board.type = "board";
  board.role = "device";
  board.processors = {class_processor("gpu", 1000, 100, 1), class_processor("cpu", 1, 10, 1)};
  board.processors[0].operator_classes->rates[static_cast<int>(OperatorClass::irregular)].gbps = 0.01;
  const auto greedy = [&](const ModelSpec& spec) {
    SynthOptions o;
    o.max_batch = 1;
    const LutTable gpu = synthesise_lut(spec, board, board.processors[0], 1, "", o);
    const LutTable cpu = synthesise_lut(spec, board, board.processors[1], 1, "", o);
    return place_stages(PlacementRule::greedy, spec, spec.num_stages(), test::gpu_cpu_board(), {&gpu, &cpu}).placement.to_string();
  };
  EXPECT_EQ(greedy(m), "[cpu:0-2,gpu:2-4]");
  // Planted: the aggregation's gathers and scatters called dense. The GPU now looks fast at them and
  // takes every stage.
  ModelSpec planted = m;
  for (StageSpec& s : planted.stages)
    for (OperatorCost& o : s.operators)
      if (o.cls == OperatorClass::irregular) o.cls = OperatorClass::dense;
  EXPECT_EQ(greedy(planted), "[gpu:0-4]");
}

TEST(OperatorClasses, ProfilesGiveEveryClassAndNoEfficiencyBeside) {
  const std::string dir = test::temp_dir("unit");
  const std::string file = dir + "/profiles.yaml";
  const std::string head =
      "profiles:\n  b:\n    role: device\n    description: x\n    processors:\n      p:\n        kind: cpu\n"
      "        description: y\n        peak_gflops: 10\n        mem_gbps: 5\n";
  const std::string classes =
      "        operator_classes:\n          source: measured\n          launch_us: 2\n"
      "          dense: {gflops: 8, gbps: 4}\n          irregular: {gbps: 1}\n          elementwise: {gbps: 5}\n"
      "          reduction: {gbps: 3}\n          select: {gbps: 0.5}\n";
  const std::string movement = "          movement: {gbps: 6, gbps_by_bytes: [[1000, 7], [2000, 5]]}\n";
  std::ofstream(file) << head + classes + movement;
  const DeviceProfile b = load_device_profiles(file).at("b");
  ASSERT_TRUE(b.processor("p")->operator_classes);
  const auto& oc = *b.processor("p")->operator_classes;
  EXPECT_DOUBLE_EQ(oc.launch_us, 2);
  EXPECT_DOUBLE_EQ(oc.rate(OperatorClass::dense).gflops, 8);
  EXPECT_DOUBLE_EQ(oc.rate(OperatorClass::select).gbps, 0.5);
  EXPECT_DOUBLE_EQ(oc.rate(OperatorClass::movement).gflops, 0);
  ASSERT_EQ(oc.rate(OperatorClass::movement).gbps_by_bytes.size(), 2u);
  EXPECT_DOUBLE_EQ(oc.rate(OperatorClass::movement).gbps_at(2000), 5);
  EXPECT_EQ(oc.source, "measured");
  const auto refused = [&](const std::string& text, const std::string& fragment) { test::expect_profiles_refused(file, text, fragment); };
  refused(head + classes, "operator_classes.movement");                                     // a class missing
  refused(head + classes + "          movement: {gbps: 0}\n", "movement.gbps");             // a rate of 0
  refused(head + classes + movement + "          vector: {gbps: 1}\n", "vector");           // no such class
  refused(head + "        efficiency: 0.5\n" + classes + movement, "replaces efficiency");  // both models at once
  refused(head + classes + movement + "      q:\n        kind: gpu\n        description: z\n        peak_gflops: 1\n        mem_gbps: 1\n" +
              "        efficiency_from: b.p\n",
          "has operator classes");  // no efficiency to copy from a class processor
}
