#include "cli/sparoa_train.hpp"

#include <chrono>
#include <cstdio>
#include <fstream>
#include <iostream>

#include "cli/commands.hpp"
#include "core/device_energy.hpp"
#include "core/device_plan.hpp"
#include "core/input_error.hpp"
#include "core/log.hpp"
#include "core/model_spec.hpp"
#include "core/text_util.hpp"
#include "io/data_root.hpp"
#include "io/lut_repository.hpp"
#include "io/model_spec_loader.hpp"
#include "io/scenario_loader.hpp"
#include "sched/operator_placement.hpp"
#include "sched/sparoa_learner.hpp"

#include <nlohmann/json.hpp>

namespace coinfer::cli {

struct SparoaTrainCli {
  bool json = false;
  std::string scenario, device, out;
  std::vector<std::string> sets;
  SparoaTrainOptions train;
};

SparoaTrainCommand::SparoaTrainCommand(CLI::App& train) : o_(new SparoaTrainCli) {
  SparoaTrainCli& o = *o_;
  cmd_ = train.add_subcommand("sparoa",
                              "SparOA's operator scheduler: a SAC policy placing one device's stages on its CPU and GPU (or NPU), trained on "
                              "inferences priced by the simulator's segment rule (sched/README.md \"SparOA\")");
  cmd_->add_option("scenario", o.scenario, "scenario file naming the device (its board's processors, model and LUTs)")->required()->check(CLI::ExistingFile);
  cmd_->add_option("--set", o.sets, "override a scenario key (KEY=VALUE; repeatable)");
  cmd_->add_option("--device", o.device, "the device whose board and model the policy is for (default: the first with a CPU and a GPU or NPU)");
  cmd_->add_option("--out", o.out, "policy file to write; POLICY.learning.csv is written beside it")->required();
  cmd_->add_option("--episodes", o.train.episodes, "episodes (one inference each; default 1000)")->check(CLI::Range(1, 1000000));
  cmd_->add_option("--warmup", o.train.warmup_episodes, "episodes of uniform random actions before learning (default 30)")->check(CLI::Range(0, 1000000));
  cmd_->add_option("--seed", o.train.seed, "seed of the weights, the exploration and the mini-batches (default 1)");
  cmd_->add_option("--hidden", o.train.hyper.hidden, "hidden width of the networks (default 64)")->check(CLI::Range(1, 8192));
  cmd_->add_option("--lr", o.train.hyper.learning_rate, "Adam learning rate (default 1e-3)")->check(CLI::Range(1e-7, 1.0));
  cmd_->add_option("--batch", o.train.hyper.batch_size, "mini-batch (default 64)")->check(CLI::Range(1, 1000000));
  cmd_->add_flag("--json", o.json,
                 "print, as JSON, the trained policy against SparOA's baselines on this board (each placement rule's placement, device ms, "
                 "share of the work on the accelerator, energy per inference and decision time) instead of the summary line");
  cmd_->add_option("--lambda-latency", o.train.reward.latency, "reward weight l1 of latency (default 1)")->check(CLI::Range(0.0, 1e6));
  cmd_->add_option("--lambda-memory", o.train.reward.memory, "reward weight l2 of M_gpu + M_cpu (default 0)")->check(CLI::Range(0.0, 1e6));
  cmd_->add_option("--lambda-switching", o.train.reward.switching, "reward weight l3 of switching seconds (default 0: latency already has them)")
      ->check(CLI::Range(0.0, 1e6));
}

SparoaTrainCommand::~SparoaTrainCommand() { delete o_; }

bool SparoaTrainCommand::chosen() const { return cmd_->parsed(); }

int SparoaTrainCommand::run(const std::string& command_line) {
  SparoaTrainCli& o = *o_;
  const Scenario s = load_scenario(o.scenario, o.sets);
  const ModelCatalog catalog = ModelCatalog::load(data_path("models"));
  const LutSet luts = load_scenario_luts(s);
  check_scenario_against(s, catalog, luts);
  const auto specs = scenario_model_specs(s, catalog);
  const DeviceSpec* dev = nullptr;
  const auto two_kinds = [](const DeviceSpec& d) {
    if (!d.hardware) return false;
    bool cpu = false, acc = false;
    for (const auto& k : d.hardware->kinds) cpu = cpu || k == "cpu", acc = acc || k == "gpu" || k == "npu";
    return cpu && acc;
  };
  for (const auto& d : s.devices)
    if (o.device.empty() ? two_kinds(d) : d.id == o.device) {
      dev = &d;
      break;
    }
  if (!dev) {
    if (!o.device.empty()) {
      std::vector<std::string> ids;
      for (const auto& d : s.devices) ids.push_back(d.id);
      throw InputError("--device: no device '" + o.device + "' in " + o.scenario + " (it has: " + join(ids) + ")");
    }
    throw InputError(o.scenario + ": no device has a CPU and a GPU or NPU (traces/devices.yaml processors); SparOA places stages between them");
  }
  const std::string run_model = model_under(dev->model, dev->strategy);
  const ModelSpec& m = specs.at(run_model + "/" + dev->dataset);
  const int k = dev->strategy.placed_stages(m.num_stages());
  if (k < 1)
    throw InputError("--device: " + dev->id + "'s strategy (" + dev->strategy.to_string() + ") runs no stage on the board: nothing to place");
  const LutKey own = dev->lut_key(run_model);
  if (!luts.contains(own)) throw InputError(o.scenario + ": no LUT for " + own.to_string());
  const std::vector<const LutTable*> tables = processor_tables(luts, own, &luts.table(own), *dev->hardware);
  SparoaBoard board{&m, k, dev->hardware.get(), tables};
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
  info.k = k;
  info.episodes = o.train.episodes;
  info.device_ms = r.device_seconds * 1e3;
  info.placement = r.placement.to_string();
  info.provenance = command_line + "; device " + dev->id + " of " + o.scenario + "; tables: " + [&] {
    std::string t;
    for (size_t p = 0; p < tables.size(); ++p)
      if (tables[p]) t += (t.empty() ? "" : ", ") + dev->hardware->processors[p] + " " + luts.origin(tables[p]->key()) + " (" + tables[p]->provenance().kind + ")";
    return t;
  }();
  const std::string csv = o.out + ".learning.csv";
  {
    std::ofstream f(csv + ".tmp");
    f << "# coinfer train sparoa learning curve: " << command_line << "\nepisode,wall_s,episode_return,policy_device_ms,alpha\n";
    for (const auto& p : r.curve)
      f << p.episode << ',' << strprintf("%.6g,%.6g,%.6g,%.6g", p.wall_s, p.episode_return, p.device_seconds * 1e3, p.alpha) << '\n';
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
    const auto describe = [&](const Placement& pl, double seconds, double decide_s) {
      Strategy st = base;
      st.placement = pl;
      const DevicePlan plan = make_device_plan(st, m.num_stages(), *dev->hardware, dev->id);
      const std::vector<double> busy = processor_seconds(plan, k, m, *dev->hardware, tables, lut_mean_time());
      double on_acc = 0;
      for (const auto& seg : plan.segments)
        on_acc += (seg.end - seg.begin) * (seg.proc == accelerator ? seg.share : seg.with == accelerator ? 1 - seg.share : 0);
      const DeviceEnergy e = device_compute_energy(dev->power, seconds, seconds, busy);
      return nlohmann::ordered_json{{"placement", pl.to_string()}, {"device_ms", seconds * 1e3}, {"accelerator_share", on_acc / k},
                                    {"energy_mj", e.compute_j * 1e3}, {"decide_s", decide_s}};
    };
    nlohmann::ordered_json rules = nlohmann::ordered_json::object();
    for (PlacementRule rule : all_placement_rules()) {
      const auto t0 = std::chrono::steady_clock::now();
      try {
        const PlacementChoice c = place_stages(rule, m, k, *dev->hardware, tables);
        rules[rule_name(rule)] = describe(c.placement, c.device_seconds, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
      } catch (const std::invalid_argument& e) {
        rules[rule_name(rule)] = {{"unavailable", e.what()}};
      }
    }
    rules["sac"] = describe(r.placement, r.device_seconds, r.wall_s);
    rules["sac"]["converged_s"] = r.converged_s;
    rules["sac"]["converged_episode"] = r.converged_episode;
    nlohmann::ordered_json j{{"device", dev->id}, {"type", dev->type}, {"model", info.model}, {"k", k}, {"episodes", o.train.episodes},
                             {"seed", o.train.seed}, {"policy", o.out}, {"learning_curve", csv}, {"rules", rules}};
    std::cout << j.dump(2) << std::endl;
    return 0;
  }
  std::printf("%s on %s (%s): SAC placement %s, %.4g ms alone on the board (DP over tenths: %s, %.4g ms; best single processor %.4g ms); "
              "converged after %d episodes, %.3g s of %.3g s training; wrote %s and %s\n",
              info.model.c_str(), dev->id.c_str(), dev->type.c_str(), info.placement.c_str(), r.device_seconds * 1e3,
              dp.placement.to_string().c_str(), dp.device_seconds * 1e3, r.reference_seconds * 1e3, r.converged_episode, r.converged_s,
              r.wall_s, o.out.c_str(), csv.c_str());
  return 0;
}

}  // namespace coinfer::cli
