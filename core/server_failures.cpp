#include "core/server_failures.hpp"

#include <algorithm>
#include <cmath>

#include "core/input_error.hpp"
#include "core/limits.hpp"
#include "core/random_stream.hpp"
#include "core/text_util.hpp"

namespace coinfer {

ServerAvailability::ServerAvailability(const Scenario& s) : changes_(s.servers.size()) {
  for (const EventSpec& e : s.events) {
    if (!e.about_server()) continue;
    const int j = s.server_index(e.server());
    if (j < 0) continue;
    changes_[static_cast<size_t>(j)].push_back({e.at_s, e.is<event::ServerRecover>()});
    any_ = true;
  }
}

bool ServerAvailability::up_at(int server, double t_s) const {
  if (server < 0 || static_cast<size_t>(server) >= changes_.size()) return true;
  bool up = true;
  for (const Change& c : changes_[static_cast<size_t>(server)]) {
    if (c.t_s > t_s) break;
    up = c.up;
  }
  return up;
}

double ServerAvailability::failed_at(int server, double t_s) const {
  if (server < 0 || static_cast<size_t>(server) >= changes_.size()) return -1;
  double at = -1;
  for (const Change& c : changes_[static_cast<size_t>(server)]) {
    if (c.t_s > t_s) break;
    if (!c.up) at = c.t_s;
  }
  return at;
}

namespace {
std::string microseconds(double t_s) { return format_double(std::round(t_s * 1e6) / 1e6); }
}  // namespace

std::string server_failed_reason(const std::string& server, double failed_at_s) {
  return "server " + server + " failed at " + microseconds(failed_at_s) + " s";
}

std::string server_down_reason(const std::string& server, double failed_at_s) {
  return "server " + server + " is down (failed at " + microseconds(failed_at_s) + " s)";
}

bool is_server_failure(const std::string& failure) {
  if (failure.rfind("server ", 0) != 0) return false;
  const auto rest = failure.find(' ', 7);
  if (rest == std::string::npos) return false;
  return failure.compare(rest, 11, " failed at ") == 0 || failure.compare(rest, 20, " is down (failed at ") == 0;
}

void add_modelled_failures(Scenario& s) {
  bool added = false;
  for (size_t j = 0; j < s.servers.size(); ++j) {
    const ServerSpec& sv = s.servers[j];
    if (!sv.failures) continue;
    RandomStream rng(s.seed, StreamPurpose::server_failure, j);
    double t = 0;
    while (true) {
      t += rng.next_exponential(1 / sv.failures->mtbf_s);  // up for an exponential time of mean mtbf_s
      if (t >= s.hard_end_s()) break;
      if (s.events.size() + 2 > limits::kMaxEvents)
        throw InputError(sv.where, "servers.failures",
                         "server " + sv.id + "'s failure model gives more than " + std::to_string(limits::kMaxEvents) +
                             " events in the run (mtbf_s " + format_double(sv.failures->mtbf_s) + " s over " + format_double(s.hard_end_s()) +
                             " s of duration and drain); raise mtbf_s");
      EventSpec fail;
      fail.at_s = t;
      fail.what = event::ServerFail{sv.id};
      fail.where = sv.where;
      s.events.push_back(fail);
      t += rng.next_exponential(1 / sv.failures->mttr_s);  // then down for one of mean mttr_s
      if (t >= s.hard_end_s()) break;
      EventSpec recover = fail;
      recover.at_s = t;
      recover.what = event::ServerRecover{sv.id};
      s.events.push_back(recover);
    }
    added = true;
  }
  if (added) std::stable_sort(s.events.begin(), s.events.end(), [](const EventSpec& a, const EventSpec& b) { return a.at_s < b.at_s; });
}

void check_server_failures(const Scenario& s) {
  std::vector<bool> up(s.servers.size(), true);
  for (const EventSpec& e : s.events) {
    if (!e.about_server()) continue;
    const int j = s.server_index(e.server());
    if (j < 0) throw InputError(e.where, "events", "unknown server '" + e.server() + "'");
    const bool fails = e.is<event::ServerFail>();
    if (fails != up[static_cast<size_t>(j)])
      throw InputError(e.where, fails ? "events.fail" : "events.recover",
                       "server " + e.server() + (fails ? " fails at " : " recovers at ") + format_double(e.at_s) + " s while it is already " +
                           (fails ? "down (give a recover: true before it fails again)" : "up (a recover follows a fail of the same server)"));
    up[static_cast<size_t>(j)] = !fails;
  }
}

}  // namespace coinfer
