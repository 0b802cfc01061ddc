#include "core/helper_forwarding.hpp"

#include <algorithm>
#include <map>
#include <string>

namespace coinfer {

std::vector<std::pair<int, int>> helper_pairs(const Scenario& s) {
  // Linear in the devices: each server's input-creating devices listed once, in scenario order.
  const auto idle = [](const DeviceSpec& d) { return d.workload.arrival == WorkloadSpec::Arrival::none; };
  std::map<std::string, std::vector<int>> creating;  // server id -> its non-idle devices
  bool any_idle = false;
  for (size_t o = 0; o < s.devices.size(); ++o) {
    if (idle(s.devices[o]))
      any_idle = true;
    else
      creating[s.devices[o].server].push_back(static_cast<int>(o));
  }
  std::vector<std::pair<int, int>> out;
  if (!any_idle) return out;
  for (size_t h = 0; h < s.devices.size(); ++h) {
    if (!idle(s.devices[h])) continue;
    const auto it = creating.find(s.devices[h].server);
    if (it == creating.end()) continue;
    for (const int o : it->second) out.emplace_back(static_cast<int>(h), o);
  }
  return out;
}

double helper_batch_seconds(double input_bytes, double bytes_per_s, const LutTable& helper_lut, int split, int batch,
                            const ExecutionTimeModel& time) {
  return input_bytes / bytes_per_s + time.seconds(helper_lut, split, helper_lut.num_stages(), batch);
}

void HelperForwardPolicy::set_helpers(const std::vector<int>& devices) {
  std::map<int, bool> next;
  for (int d : devices) {
    auto it = busy_.find(d);
    next[d] = it != busy_.end() && it->second;
  }
  busy_ = std::move(next);
}

void HelperForwardPolicy::helper_done(int device) {
  auto it = busy_.find(device);
  if (it != busy_.end()) it->second = false;
}

bool HelperForwardPolicy::busy(int device) const {
  auto it = busy_.find(device);
  return it != busy_.end() && it->second;
}

std::vector<int> HelperForwardPolicy::helpers() const {
  std::vector<int> out;
  for (const auto& kv : busy_) out.push_back(kv.first);
  return out;
}

std::vector<int> HelperForwardPolicy::plan(const ServerLoad& load, const std::vector<double>& ready_server_s,
                                           const std::function<double(int, size_t)>& helper_s, const std::function<bool(int)>& available) {
  std::vector<int> chosen;
  if (busy_.empty() || load.workers <= 0) return chosen;
  double first_free = load.now_s;
  if (load.busy_workers >= load.workers && !load.running_until_s.empty())
    first_free = std::max(load.now_s, *std::min_element(load.running_until_s.begin(), load.running_until_s.end()));
  const int idle_workers = std::max(0, load.workers - load.busy_workers);
  size_t waiting = ready_server_s.size();
  while (static_cast<int>(waiting) > idle_workers) {
    auto free_helper = std::find_if(busy_.begin(), busy_.end(), [&](const auto& kv) { return !kv.second && (!available || available(kv.first)); });
    if (free_helper == busy_.end()) break;
    const size_t newest = waiting - 1;
    double ahead = 0;  // server work queued before the newest batch
    for (size_t i = 0; i < newest; ++i) ahead += ready_server_s[i];
    const double own = ready_server_s[newest];
    const double via_server = (first_free - load.now_s) + ahead / load.workers + own;
    if (helper_s(free_helper->first, newest) >= via_server) break;
    free_helper->second = true;
    chosen.push_back(free_helper->first);
    --waiting;
  }
  return chosen;
}

}  // namespace coinfer
