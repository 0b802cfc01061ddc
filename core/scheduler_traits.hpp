#pragma once
// What the rest of the program relies on about a scheduler, declared once with its registration
// (sched/scheduler_factory.hpp, scheduler_traits()): nothing outside the registry compares its name.
namespace coinfer {

struct SchedulerTraits {
  // Every device runs its scenario strategy as given (static): only those strategies' LUT entries are
  // needed; any other scheduler may choose any split.
  bool keeps_scenario_strategies = false;
  // Its schemes come from outside coinfer (the external process, a scheduler registered at run time):
  // it sets servers and batching in its own schemes (so it may move devices between servers), and the
  // scenario's server choice and batch candidates are refused for it.
  bool from_outside = false;
  // The check, before anything runs, that the whole system is not too large for it: none; its
  // decisions' work in device-solves (scheduler.max_work); its count of schemes (scheduler.max_schemes).
  enum class SizeCheck { none, decision_work, scheme_count };
  SizeCheck size_check = SizeCheck::none;
};

}  // namespace coinfer
