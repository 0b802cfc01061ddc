#pragma once
// Builds the scheduler a scenario names. Unknown names or parameters are InputErrors listing the
// allowed ones.
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "core/scenario.hpp"
#include "core/scheduler.hpp"
#include "core/system_state.hpp"
#include "sched/analytic_estimator.hpp"

namespace coinfer {

// Every scheduler a scenario can name (one table, one registration each): the
// built-ins of sched/scheduler_factory.cpp (the external process among them), then those a program
// adds at run time with register_scheduler (a test's own scheduler).
struct SchedulerInfo {
  std::string name;
  std::string summary;            // what it does (Markdown)
  std::string params_doc;         // its own parameters with defaults, as the docs show them (Markdown)
  std::vector<std::string> keys;  // the scheduler.* keys it reads
  SchedulerTraits traits;         // a registration at run time is always from_outside
};
std::vector<SchedulerInfo> scheduler_catalog();
// The traits of the scheduler named `name` (built in or registered); an unknown name gets the default
// traits (an adaptive scheduler: any split), and make_scheduler refuses it.
SchedulerTraits scheduler_traits(const std::string& name);
// A scheduler added to the table at run time: built with each "model/dataset" of the scenario's number
// of stages (what a pp(k) may split); every scheme it returns is checked (devices known, splits in
// range) before the engines see it. Replaces one of the same name; a built-in's name is refused
// (std::invalid_argument).
struct SchedulerRegistration {
  SchedulerInfo info;  // name, summary, params_doc, keys (the scheduler.* keys it reads; others are refused)
  std::function<std::unique_ptr<Scheduler>(const Scenario& scenario, const std::map<std::string, int>& stages)> make;
};
void register_scheduler(SchedulerRegistration registration);
std::vector<std::string> scheduler_names();
// The catalog as sched/README.md's table "Schedulers (`scheduler.name`)" (`coinfer scheduler list --markdown`).
std::string scheduler_table_markdown();
// The analytic estimator for a scenario: `specs` holds "model/dataset" -> spec for every device's pair;
// the objective comes from scheduler.objective (InputError naming that key if unknown). `luts` must
// outlive the estimator.
std::unique_ptr<AnalyticEstimator> make_estimator(const Scenario& scenario, const LutSet& luts, ModelSpecs specs);
// What the scenario's scheduler ranks schemes with, for a run's records: "" (static, local, offload),
// "analytic", or "gin (FILE)" (scheduler.estimator: gin; FILE resolved as the scheduler loads it).
std::string estimator_of(const Scenario& scenario);
// The largest latency feature (ms) of the state's system graphs under all-local and all-offload
// schemes: what a learned predictor's training range is checked against.
double largest_node_latency_ms(const SystemState& state, const AnalyticEstimator& est);
// `estimator` must outlive the scheduler.
std::unique_ptr<Scheduler> make_scheduler(const Scenario& scenario, const AnalyticEstimator& estimator);

// Refuses (InputError naming scheduler.max_work) a greedy or hierarchical scheduler whose decisions on the
// whole system (every scenario device connected) would take more than scheduler.max_work device-solves
// (default 5e6: about 2-5 s a decision on this project's 2-core machine; sched/README.md "Complexity"), before
// anything runs, instead of deciding for minutes. Other schedulers pass (oracle refuses by max_schemes).
void check_decision_work(const Scenario& scenario, const AnalyticEstimator& estimator, SystemState state);
// Refuses, before anything runs, a scheduler that cannot cope with the whole system (every device of
// `all` connected): check_decision_work, and an oracle above scheduler.max_schemes (InputError naming
// that key). Both engines call it on scenario_state(scenario, 0). May call scheduler.decide (oracle).
void check_scheduler_size(const Scenario& scenario, const AnalyticEstimator& estimator, Scheduler& scheduler, SystemState all);

}  // namespace coinfer
