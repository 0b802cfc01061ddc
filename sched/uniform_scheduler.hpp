#pragma once
// A scheduler that does not search: every connected device on one strategy (local, offload).
#include <string>

#include "core/scheduler.hpp"

namespace coinfer {

class UniformScheduler : public Scheduler {
 public:
  UniformScheduler(std::string name, Strategy s) : name_(std::move(name)), strategy_(s) {}
  std::string name() const override { return name_; }
  Scheme decide(const SystemState& state) override;

 private:
  std::string name_;
  Strategy strategy_;
};

}  // namespace coinfer
