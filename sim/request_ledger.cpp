#include "sim/request_ledger.hpp"

namespace sg4 = simgrid::s4u;

namespace coinfer::sim {

SimRequest& RequestLedger::create(int device) {
  requests_.emplace_back();
  SimRequest& r = requests_.back();
  r.rec.id = static_cast<std::int64_t>(requests_.size() - 1);
  r.rec.device = device;
  r.rec.t_created = sg4::Engine::get_clock();
  ++unfinished_;
  return r;
}

void RequestLedger::finish(SimRequest& r) {
  r.finished = true;
  --unfinished_;
  if (unfinished_ == 0 && sg4::Engine::get_clock() >= arrivals_end_s_) all_done_->release();
}

}  // namespace coinfer::sim
