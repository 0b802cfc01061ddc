#include "cli/sparoa_train.hpp"

#include <algorithm>
#include <chrono>
#include <map>
#include <memory>
#include <optional>
#include <cstdio>
#include <fstream>
#include <iostream>

#include "cli/commands.hpp"
#include "core/device_energy.hpp"
#include "core/device_plan.hpp"
#include "core/input_error.hpp"
#include "core/log.hpp"
#include "core/model_spec.hpp"
#include "core/plan_memory.hpp"
#include "core/text_util.hpp"
#include "io/data_root.hpp"
#include "io/lut_repository.hpp"
#include "io/model_spec_loader.hpp"
#include "io/scenario_loader.hpp"
#include "sched/operator_placement.hpp"
#include "sched/sparoa_learner.hpp"
#include "sched/threshold_predictor.hpp"
#include "core/random_stream.hpp"
#include "sched/scheduler_factory.hpp"
#include "cli/scenario_args.hpp"

#include <nlohmann/json.hpp>

namespace coinfer::cli {

struct SparoaTrainCli {
  bool json = false;
  std::string scenario, device, out, thresholds;
  std::vector<std::string> sets;
  SparoaTrainOptions train;
  // train thresholds
  std::string t_scenario, t_device, t_out;
  std::vector<std::string> t_sets;
  int sequences = 40;
  ThresholdTrainOptions t_train;
};

namespace {

// The device a SparOA command is for: its scenario, LUTs, model specs and tables.
struct ResolvedBoard {
  Scenario s;
  LutSet luts;
  ModelSpecs specs;
  const DeviceSpec* dev = nullptr;
  std::string run_model;
  const ModelSpec* m = nullptr;
  int k = 0;
  std::vector<const LutTable*> tables;
};

std::unique_ptr<ResolvedBoard> resolve_board(const std::string& scenario, const std::vector<std::string>& sets, const std::string& device,
                                             const ModelCatalog& catalog) {
  auto b = std::make_unique<ResolvedBoard>();
  b->s = load_scenario(scenario, sets);
  b->luts = load_scenario_luts(b->s);
  check_scenario_against(b->s, catalog, b->luts, scheduler_traits(b->s.scheduler.name));
  b->specs = scenario_model_specs(b->s, catalog);
  const auto two_kinds = [](const DeviceSpec& d) {
    if (!d.hardware) return false;
    bool cpu = false, acc = false;
    for (const auto& k : d.hardware->kinds) cpu = cpu || k == "cpu", acc = acc || k == "gpu" || k == "npu";
    return cpu && acc;
  };
  for (const auto& d : b->s.devices)
    if (device.empty() ? two_kinds(d) : d.id == device) {
      b->dev = &d;
      break;
    }
  if (!b->dev) {
    if (!device.empty()) {
      std::vector<std::string> ids;
      for (const auto& d : b->s.devices) ids.push_back(d.id);
      throw InputError("--device: no device '" + device + "' in " + scenario + " (it has: " + join(ids) + ")");
    }
    throw InputError(scenario + ": no device has a CPU and a GPU or NPU (traces/devices.yaml processors); SparOA places stages between them");
  }
  const DeviceSpec* dev = b->dev;
  b->run_model = model_under(dev->model, dev->strategy);
  b->m = &b->specs.at(ModelKey{b->run_model, dev->dataset});
  b->k = dev->strategy.placed_stages(b->m->num_stages());
  const LutKey own = dev->lut_key(b->run_model);
  if (!b->luts.contains(own)) throw InputError(scenario + ": no LUT for " + own.to_string());
  b->tables = processor_tables(b->luts, own, &b->luts.table(own), *dev->hardware);
  return b;
}

}  // namespace

SparoaTrainCommand::SparoaTrainCommand(CLI::App& train) : o_(new SparoaTrainCli) {
  SparoaTrainCli& o = *o_;
  cmd_ = train.add_subcommand("sparoa",
                              "SparOA's operator scheduler: a SAC policy placing one device's stages on its CPU and GPU (or NPU), trained on "
                              "inferences priced by the simulator's segment rule (sched/README.md \"SparOA\")");
  add_scenario_args(*cmd_, o.scenario, o.sets, "scenario file naming the device (its board's processors, model and LUTs)")->check(CLI::ExistingFile);
  cmd_->add_option("--device", o.device, "the device whose board and model the policy is for (default: the first with a CPU and a GPU or NPU)");
  cmd_->add_option("--out", o.out, "policy file to write; POLICY.learning.csv is written beside it")->required();
  cmd_->add_option("--episodes", o.train.episodes, "episodes (one inference each; default 1000)")->check(CLI::Range(1, 1000000));
  cmd_->add_option("--warmup", o.train.warmup_episodes, "episodes of uniform random actions before learning (default 30)")
      ->check(CLI::Range(0, 1000000));
  cmd_->add_option("--seed", o.train.seed, "seed of the weights, the exploration and the mini-batches (default 1)");
  cmd_->add_option("--hidden", o.train.hyper.hidden, "hidden width of the networks (default 64)")->check(CLI::Range(1, 8192));
  cmd_->add_option("--lr", o.train.hyper.learning_rate, "Adam learning rate (default 1e-3)")->check(CLI::Range(1e-7, 1.0));
  cmd_->add_option("--batch", o.train.hyper.batch_size, "mini-batch (default 64)")->check(CLI::Range(1, 1000000));
  cmd_->add_flag(
      "--json", o.json,
      "print, as JSON, the trained policy against SparOA's baselines on this board (each placement rule's placement, device ms, "
      "share of the work on the accelerator, ms copying tensors between processors, energy and memory of one inference and decision time) instead of "
      "the summary line");
  cmd_->add_option("--thresholds", o.thresholds,
                   "a threshold predictor from coinfer train thresholds for this board: its thresholds enter the state (SparOA Sec. 3) and --json "
                   "adds the thresholds-only rule (SparOA w/o RL)")
      ->check(CLI::ExistingFile);
  cmd_->add_flag("--any-split", o.train.any_split,
                 "one policy for every split between the board and the server (episodes draw the board's stage count; for scheduler sac's "
                 "placement_policy, whose splits change) instead of the device's own split only");
  cmd_->add_option("--lambda-latency", o.train.reward.latency, "reward weight l1 of latency (default 1)")->check(CLI::Range(0.0, 1e6));
  cmd_->add_option("--lambda-memory", o.train.reward.memory, "reward weight l2 of M_gpu + M_cpu (default 0)")->check(CLI::Range(0.0, 1e6));
  cmd_->add_option("--lambda-switching", o.train.reward.switching, "reward weight l3 of switching seconds (default 0: latency already has them)")
      ->check(CLI::Range(0.0, 1e6));

  thresholds_cmd_ = train.add_subcommand(
      "thresholds",
      "SparOA's threshold predictor (Transformer encoder + BiLSTM) for a device's board, trained on the ground truth of a grid search over "
      "each shipped model's stages on the board's synthesised roofline (sched/README.md \"SparOA\")");
  add_scenario_args(*thresholds_cmd_, o.t_scenario, o.t_sets, "scenario file naming the device (its board type and LUTs)")->check(CLI::ExistingFile);
  thresholds_cmd_->add_option("--device", o.t_device, "the device whose board the predictor is for (default: the first with a CPU and a GPU or NPU)");
  thresholds_cmd_->add_option("--out", o.t_out, "predictor file to write; PREDICTOR.samples.csv (the sample set) is written beside it")->required();
  thresholds_cmd_->add_option("--sequences", o.sequences, "sample sequences per model and dataset, each with its own sparsity per stage (default 40)")
      ->check(CLI::Range(1, 100000));
  thresholds_cmd_->add_option("--epochs", o.t_train.epochs, "training epochs (default 600; SparOA trains 100 at a tenth of the rate)")
      ->check(CLI::Range(1, 100000));
  thresholds_cmd_->add_option("--lr", o.t_train.learning_rate, "Adam learning rate (default 1e-3; SparOA 1e-4)")->check(CLI::Range(1e-8, 1.0));
  thresholds_cmd_
      ->add_option("--validation", o.t_train.validation_share,
                   "share of the sequences held out of training to choose the epoch kept (default 0.1; 0: the last epoch's net)")
      ->check(CLI::Range(0.0, 0.5));
  thresholds_cmd_->add_option("--seed", o.t_train.seed, "seed of the weights, the sparsity draws, the split and the batches (default 1)");
}

SparoaTrainCommand::~SparoaTrainCommand() { delete o_; }

bool SparoaTrainCommand::chosen() const { return cmd_->parsed() || thresholds_cmd_->parsed(); }

int SparoaTrainCommand::run(const std::string& command_line) {
  if (thresholds_cmd_->parsed()) return run_thresholds(command_line);
  SparoaTrainCli& o = *o_;
  const ModelCatalog catalog = ModelCatalog::load(data_path("models"));
  const auto rb = resolve_board(o.scenario, o.sets, o.device, catalog);
  const DeviceSpec* dev = rb->dev;
  const std::string& run_model = rb->run_model;
  const ModelSpec& m = *rb->m;
  // An offloading device's policy for every split is reported (and evaluated) on the whole model.
  const int k = rb->k >= 1 || !o.train.any_split ? rb->k : m.num_stages();
  const LutSet& luts = rb->luts;
  const std::vector<const LutTable*>& tables = rb->tables;
  if (k < 1 && !o.train.any_split)
    throw InputError("--device: " + dev->id + "'s strategy (" + dev->strategy.to_string() + ") runs no stage on the board: nothing to place" +
                     " (--any-split trains for every split)");
  const LutKey own = dev->lut_key(run_model);
  SparoaBoard board{&m, k, dev->hardware.get(), tables};
  if (!o.thresholds.empty()) {
    ThresholdPredictorInfo tinfo;
    ThresholdNet net = load_threshold_predictor(o.thresholds, &tinfo);
    if (tinfo.device_type != dev->type)
      throw InputError(SourceLocation{o.thresholds, 0, 0}, "device_type",
                       "the threshold predictor was trained for a " + tinfo.device_type + ", the device " + dev->id + " is a " + dev->type);
    std::vector<std::vector<float>> inputs;
    for (int st = 0; st < m.num_stages(); ++st) {
      std::optional<double> rho;
      for (const LutTable* t : tables)
        if (t && !rho) rho = t->stage_output_sparsity(st);
      inputs.push_back(threshold_inputs(m, st, rho.value_or(0)));
    }
    board.thresholds = predict_thresholds(net, inputs);
    if (!o.train.any_split) board.thresholds.resize(static_cast<size_t>(k));
  }
  try {
    SparoaEnvironment probe(board, o.train.reward);
  } catch (const std::invalid_argument& e) {
    throw InputError("--device: " + dev->id + ": " + e.what());
  }
  o.train.hyper.features = sparoa_feature_count();
  const bool quiet = cli::quiet("train");
  o.train.progress = [&](int episode, double seconds) {
    if (!quiet && (episode % 50 == 0 || episode == o.train.episodes))
      std::fprintf(stderr, "\rtrain sparoa: episode %d/%d, policy's placement %.4g ms   ", episode, o.train.episodes, seconds * 1e3);
  };
  SacAgent agent(o.train.hyper, o.train.seed);
  const SparoaTrainResult r = train_sparoa(board, o.train, agent);
  if (!quiet) std::fprintf(stderr, "\n");
  // The exhaustive reference: the DP over every placement of whole and split stages on the tenths grid.
  const PlacementChoice dp = place_stages(PlacementRule::dp, m, k, *dev->hardware, tables);

  SparoaPolicyInfo info;
  info.hidden = o.train.hyper.hidden;
  info.device_type = dev->type;
  info.processors = dev->hardware->processors;
  info.model = run_model + "/" + dev->dataset;
  info.k = o.train.any_split ? 0 : k;
  info.episodes = o.train.episodes;
  info.device_ms = r.device_seconds * 1e3;
  info.placement = r.placement.to_string();
  info.thresholds = board.thresholds;
  info.thresholds_from = o.thresholds;
  info.provenance = command_line + "; device " + dev->id + " of " + o.scenario + "; tables: " + [&] {
    std::string t;
    for (size_t p = 0; p < tables.size(); ++p)
      if (tables[p])
        t += (t.empty() ? "" : ", ") + dev->hardware->processors[p] + " " + luts.origin(tables[p]->key()) + " (" + tables[p]->provenance().kind + ")";
    return t;
  }();
  const std::string csv = o.out + ".learning.csv";
  {
    std::ofstream f(csv + ".tmp");
    f << "# coinfer train sparoa learning curve: " << command_line << "\nepisode,wall_s,episode_return,policy_device_ms,score,alpha\n";
    for (const auto& p : r.curve)
      f << p.episode << ',' << strprintf("%.6g,%.6g,%.6g,%.6g,%.6g", p.wall_s, p.episode_return, p.device_seconds * 1e3, p.score, p.alpha) << '\n';
    if (!f) throw std::runtime_error("cannot write " + csv);
  }
  std::rename((csv + ".tmp").c_str(), csv.c_str());
  save_sparoa_policy(o.out, info, agent.actor());
  if (o.json) {
    // Each placement alone on the board: its device seconds, the accelerator's share of the stages
    // (mean over stages of the share each runs there: SparOA Fig. 6), the energy of one inference by
    // the simulator's formula (core/device_energy.hpp: the board idle all along, each processor busy
    // for its segments) and the time the rule took to decide (SAC: its training).
    const Strategy base = k >= m.num_stages() ? Strategy::local() : Strategy::pp(k);
    const int accelerator = SparoaEnvironment(board).accelerator();
    // The same board without copies between its processors: a placement's seconds there less its
    // seconds here are its copies' (segment_seconds adds each copy to its segment; SparOA Fig. 7).
    DeviceHardware zero_copy = *dev->hardware;
    zero_copy.zero_copy = true;
    // Memory: one inference alone (core/plan_memory.hpp), all pools summed, a split stage's weights as the
    // rule's engine stores them: SparOA's own rules shard them by output channels (Sec. 6.8.2), CoDL and
    // GraNNite hold them whole on both processors (a split along rows; CoDL keeps each processor's tensors in
    // its own data type).
    const auto weights = [&m](int b, int e) {
      double w = 0;
      for (int s = b; s < e; ++s) w += m.stages[static_cast<size_t>(s)].weight_bytes;
      return w;
    };
    const auto working = [&m](int b, int e) {
      double w = 0;
      for (int s = b; s < e; ++s) w = std::max(w, m.stage_working_bytes(s));
      return w;
    };
    const auto describe = [&](const Placement& pl, double seconds, double decide_s, SplitStorage storage) {
      Strategy st = base;
      st.placement = pl;
      const DevicePlan plan = make_device_plan(st, m.num_stages(), *dev->hardware, dev->id);
      double memory = 0;
      for (double b : one_inference_pool_peak_bytes(plan, *dev->hardware, weights, working, storage)) memory += b;
      const std::vector<double> busy = processor_seconds(plan, k, m, *dev->hardware, tables, lut_mean_time());
      double on_acc = 0;
      for (const auto& seg : plan.segments)
        on_acc += (seg.end - seg.begin) * (seg.proc == accelerator ? seg.share : seg.with == accelerator ? 1 - seg.share : 0);
      const DeviceEnergy e = device_compute_energy(dev->power, seconds, seconds, busy);
      return nlohmann::ordered_json{
          {"placement", pl.to_string()},
          {"device_ms", seconds * 1e3},
          {"accelerator_share", on_acc / k},
          {"transfer_ms", (placement_seconds(pl, m, k, *dev->hardware, tables) - placement_seconds(pl, m, k, zero_copy, tables)) * 1e3},
          {"energy_mj", e.total_j() * 1e3},
          {"memory_mb", memory / 1e6},
          {"decide_s", decide_s}};
    };
    nlohmann::ordered_json rules = nlohmann::ordered_json::object();
    for (PlacementRule rule : all_placement_rules()) {
      const auto t0 = std::chrono::steady_clock::now();
      try {
        const PlacementChoice c = place_stages(rule, m, k, *dev->hardware, tables);
        const bool sparoa_engine = rule == PlacementRule::greedy || rule == PlacementRule::dp;  // SparOA-greedy, SparOA-DP
        rules[rule_name(rule)] = describe(c.placement, c.device_seconds, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(),
                                          sparoa_engine ? SplitStorage::channels : SplitStorage::rows);
      } catch (const std::invalid_argument& e) {
        rules[rule_name(rule)] = {{"unavailable", e.what()}};
      }
    }
    if (!board.thresholds.empty()) {
      // SparOA w/o RL: the thresholds alone (sched/sparoa_thresholds.hpp thresholds_say_cpu).
      const auto t0 = std::chrono::steady_clock::now();
      SparoaEnvironment env(board);
      double seconds = 0;
      int stage = 0;
      const Placement pl = sparoa_rollout(
          env,
          [&](const std::vector<float>&) {
            const int st = stage++;
            return thresholds_say_cpu(stage_intensity(m, st), board.thresholds[static_cast<size_t>(st)]) ? 0.0 : 1.0;
          },
          &seconds);
      rules["thresholds"] =
          describe(pl, seconds, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), SplitStorage::channels);
    }
    rules["sac"] = describe(r.placement, r.device_seconds, r.wall_s, SplitStorage::channels);
    rules["sac"]["converged_s"] = r.converged_s;
    rules["sac"]["converged_episode"] = r.converged_episode;
    nlohmann::ordered_json j{{"device", dev->id},    {"type", dev->type}, {"model", info.model},   {"k", k},        {"episodes", o.train.episodes},
                             {"seed", o.train.seed}, {"policy", o.out},   {"learning_curve", csv}, {"rules", rules}};
    std::cout << j.dump(2) << std::endl;
    return 0;
  }
  std::printf(
      "%s on %s (%s): SAC placement %s, %.4g ms alone on the board (DP over tenths: %s, %.4g ms; best single processor %.4g ms); "
      "converged after %d episodes, %.3g s of %.3g s training; wrote %s and %s\n",
      info.model.c_str(), dev->id.c_str(), dev->type.c_str(), info.placement.c_str(), r.device_seconds * 1e3, dp.placement.to_string().c_str(),
      dp.device_seconds * 1e3, r.reference_seconds * 1e3, r.converged_episode, r.converged_s, r.wall_s, o.out.c_str(), csv.c_str());
  return 0;
}

int SparoaTrainCommand::run_thresholds(const std::string& command_line) {
  SparoaTrainCli& o = *o_;
  const ModelCatalog catalog = ModelCatalog::load(data_path("models"));
  const auto rb = resolve_board(o.t_scenario, o.t_sets, o.t_device, catalog);
  const DeviceSpec* dev = rb->dev;
  const DeviceHardware& hw = *dev->hardware;
  // Samples (SparOA Sec. 3.3): every shipped model and dataset the board has CPU and GPU (or NPU) tables
  // of; per stage a sparsity drawn from 0, 0.1, ..., 0.9, the truth by grid search on the roofline.
  std::vector<ThresholdSequence> data;
  std::string csv_rows, origins;
  int skipped = 0;
  std::string why_skipped;
  for (const auto& model : catalog.model_names())
    for (const auto& ds : catalog.datasets_for(model)) {
      const LutKey own{dev->type, model, ds, dev->default_processor()};
      if (!rb->luts.contains(own)) continue;
      const auto tables = processor_tables(rb->luts, own, &rb->luts.table(own), hw);
      int cpu = -1, acc = -1;
      for (int p = 0; p < hw.size(); ++p) {
        if (!tables[static_cast<size_t>(p)]) continue;
        if (hw.kinds[static_cast<size_t>(p)] == "cpu" && cpu < 0) cpu = p;
        if ((hw.kinds[static_cast<size_t>(p)] == "gpu" || (hw.kinds[static_cast<size_t>(p)] == "npu")) && acc < 0) acc = p;
      }
      if (cpu < 0 || acc < 0) continue;
      RooflineProcessor rc, ra;
      try {
        rc = RooflineProcessor::from_table(*tables[static_cast<size_t>(cpu)]);
        ra = RooflineProcessor::from_table(*tables[static_cast<size_t>(acc)]);
      } catch (const std::invalid_argument& e) {
        ++skipped;
        why_skipped = e.what();
        continue;
      }
      origins += (origins.empty() ? "" : "; ") + model + "/" + ds + ": " + rb->luts.origin(tables[static_cast<size_t>(cpu)]->key()) + ", " +
                 rb->luts.origin(tables[static_cast<size_t>(acc)]->key());
      const ModelSpec& m = catalog.spec(model, ds);
      for (int q = 0; q < o.sequences; ++q) {
        RandomStream rng(o.t_train.seed, StreamPurpose::sparoa_thresholds, data.size());
        ThresholdSequence seq;
        seq.name = model + "/" + ds + " #" + std::to_string(q);
        for (int st = 0; st < m.num_stages(); ++st) {
          const double rho = static_cast<double>(rng.next_u64() % 10) / 10;
          const StageThresholds t = threshold_truth(m, st, rho, rc, ra);
          seq.inputs.push_back(threshold_inputs(m, st, rho));
          seq.targets.push_back({static_cast<float>(t.sparsity), static_cast<float>(scale_intensity(t.intensity))});
          csv_rows += strprintf("%zu,%s,%s,%d,%s,%.2f,%.6g,%.4f,%.6g\n", data.size(), model.c_str(), ds.c_str(), st,
                                m.stages[static_cast<size_t>(st)].op.c_str(), rho, stage_intensity(m, st), t.sparsity, t.intensity);
        }
        data.push_back(std::move(seq));
      }
    }
  if (data.size() < 2)
    throw InputError(
        o.t_scenario + ": the board of " + dev->id + " (" + dev->type + ") has " +
        (skipped ? "no synthesised CPU and GPU tables (" + why_skipped + ")" : std::string("CPU and GPU (or NPU) tables of no shipped model")) +
        "; the threshold ground truth is a grid search on the synthesised roofline (coinfer lut synth)");
  const bool quiet = cli::quiet("train");
  if (!quiet) std::fprintf(stderr, "train thresholds: %zu sequences, training %d epochs...\n", data.size(), o.t_train.epochs);
  ThresholdNet net(static_cast<int>(threshold_input_names().size()));
  torch::manual_seed(static_cast<int64_t>(RandomStream(o.t_train.seed, StreamPurpose::predictor_training, 3).next_u64() >> 1));
  net = ThresholdNet(static_cast<int>(threshold_input_names().size()));
  const ThresholdTrainResult r = train_threshold_predictor(data, o.t_train, net);
  const std::string csv = o.t_out + ".samples.csv";
  {
    std::ofstream f(csv + ".tmp");
    f << "# SparOA threshold samples for " << dev->type << " (" << command_line << ")\n"
      << "# ground truth: grid search (sched/sparoa_thresholds.hpp) on the SYNTHESISED roofline of these tables: " << origins << "\n"
      << "# sparsity model (ASSUMED, SparOA Sec. 2's premise): the CPU computes F (1 - rho), the GPU F; our own kernels are dense\n"
      << "sequence,model,dataset,stage,op,rho,intensity_flops_per_byte,sparsity_threshold,intensity_threshold\n"
      << csv_rows;
    if (!f) throw std::runtime_error("cannot write " + csv);
  }
  std::rename((csv + ".tmp").c_str(), csv.c_str());
  ThresholdPredictorInfo info;
  info.device_type = dev->type;
  info.provenance = command_line + "; " + std::to_string(data.size()) + " sequences; samples " + csv;
  info.result = r;
  save_threshold_predictor(o.t_out, info, net);
  std::printf(
      "threshold predictor for %s: %d train / %d test sequences (%d test operators); within ±10%% on the test split: sparsity %.1f%%, "
      "intensity %.1f%% (linear regression: %.1f%%, %.1f%%; SparOA Table 3: 92.3%%, 90.6%%); %s; wrote %s and %s\n",
      dev->type.c_str(), r.train_sequences, r.test_sequences, r.test.operators, 100 * r.test.sparsity, 100 * r.test.intensity,
      100 * r.linear_test.sparsity, 100 * r.linear_test.intensity,
      (r.validation_sequences > 0
           ? strprintf("kept the net of epoch %d of %d, best on %d validation sequences (sparsity %.1f%%, intensity %.1f%%)", r.kept_epoch,
                       o.t_train.epochs, r.validation_sequences, 100 * r.validation.sparsity, 100 * r.validation.intensity)
           : strprintf("kept the last epoch's net (no validation)"))
          .c_str(),
      o.t_out.c_str(), csv.c_str());
  return 0;
}

}  // namespace coinfer::cli
