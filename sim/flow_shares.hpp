#pragma once
// Transfers sharing links, computed by coinfer rather than by SimGrid's solver. Engine-free: every call
// is given the simulated time, which never goes back; sim/device_transfers.hpp drives it from one kernel
// timer. Nothing here blocks or advances a clock.
//
// The model is SimGrid's CM02 network model as coinfer configures it unless the user's --cfg changes the
// network (sim/simulation.cpp: network/model:CM02, network/crosstraffic:0, network/TCP-gamma:1e12),
// rewritten from its definition (bench/RESULTS.md "Ninth pass"), not copied. A transfer of S bytes over a
// route of links with latencies l_i:
//   - waits its route's latency L = sum(l_i) first, taking no share of any link meanwhile;
//   - then sends at its share of a weighted max-min fair allocation: a link gives at most its capacity
//     c(t) (its bandwidth schedule at t, bytes/s) to the transfers crossing it; a transfer's weight is
//     1 / L (1 where L = 0, SimGrid's penalty of a route without latency), so transfers bottlenecked on
//     the same link get rates in inverse proportion to their latencies (TCP's RTT unfairness);
//   - is bounded by the smallest peak bandwidth of its route and by TCP-gamma / (2 L);
//   - completes when its S bytes are sent (a transfer of 0 bytes at the end of its latency).
// Shares are recomputed only for the transfers a change can reach: the connected set of links and
// transfers around a link that gained or lost a transfer, or whose capacity changed.
//
// Units: bytes, bytes per second, seconds of simulated time.
#include <cstdint>
#include <limits>
#include <vector>

#include "core/bandwidth_schedule.hpp"

namespace coinfer::sim {

class FlowShares {
 public:
  using Link = std::int32_t;
  using Flow = std::int32_t;  // a slot: reused once its transfer has completed or been cancelled
  static constexpr int kMaxRoute = 4;
  static constexpr double kNever = std::numeric_limits<double>::infinity();

  explicit FlowShares(double tcp_gamma_bytes = 1e12) : tcp_gamma_(tcp_gamma_bytes) {}

  // A link of `latency_s` whose capacity follows `schedule` (bytes/s at t), or is `peak_bytes_per_s`
  // throughout where `schedule` is null. `peak_bytes_per_s` bounds every transfer crossing it; a
  // schedule must not exceed it. The schedule must outlive this object.
  Link add_link(double peak_bytes_per_s, double latency_s, const BandwidthSchedule* schedule = nullptr);

  // Starts a transfer of `bytes` over `route` (1 to kMaxRoute links) at `now_s`. A link listed twice
  // carries it twice (SimGrid's route between two devices crosses the access point twice). `tag` is
  // handed back when it completes.
  Flow start(double now_s, const Link* route, int route_length, double bytes, std::uint64_t tag);
  // Ends transfer `f` before its completion; returns the bytes it had not sent.
  double cancel(double now_s, Flow f);
  // The bytes transfer `f` has still to send at `now_s`.
  double remaining(double now_s, Flow f) const;
  // Its current rate in bytes/s (0 during its latency).
  double rate(Flow f) const { return flows_[static_cast<size_t>(f)].rate; }

  // When the next thing happens: a completion, a latency's end, a capacity change under a running
  // transfer; kNever when nothing will. Recomputes the shares a change since the last call touched.
  double next_event_s();
  // Handles everything due at `now_s` (the value next_event_s() returned) and appends the tags of the
  // transfers that completed, in the order they started.
  void advance(double now_s, std::vector<std::uint64_t>& completed);

  std::size_t running() const { return flows_.size() - free_.size(); }

 private:
  enum class State : std::uint8_t { free, latency, sending };
  struct FlowData {
    Link route[kMaxRoute] = {};
    std::int32_t at_in_link[kMaxRoute] = {};  // its index in each link's `sending`
    std::int8_t hops = 0;
    State state = State::free;
    bool fixed = false;    // solver scratch
    double remaining = 0;  // bytes, as of updated_s
    double updated_s = 0;
    double rate = 0;          // bytes/s
    double penalty = 1;       // L, or 1 where L = 0
    double bound = kNever;    // bytes/s
    double event_s = kNever;  // its latency's end, or its completion
    std::uint64_t order = 0;  // start order: ties between events at the same time
    std::uint64_t tag = 0;
    std::int32_t heap_at = -1;
    std::uint32_t round = 0;  // the solve round that last gave it a rate
    bool dirty = false;       // began sending: needs a rate
  };
  struct LinkData {
    double peak = 0, latency = 0;
    const BandwidthSchedule* schedule = nullptr;
    std::vector<Flow> sending;  // transfers past their latency crossing it
    double change_s = kNever;   // its capacity's next change, scheduled while it carries transfers
    std::int32_t heap_at = -1;
    bool dirty = false;
    // The sum of its sending transfers' bounds: at or below its capacity, no allocation can fill it, so
    // it constrains no one (it binds only above: `binding`, as last evaluated) and the solver neither
    // counts it nor follows it to the transfers beyond (an access point or a server's link carrying many
    // transfers below its capacity joins no component).
    double sum_bound = 0;
    bool binding = false;
    std::uint32_t round = 0;     // the solve round that last reached it
    double left = 0, usage = 0;  // solver scratch: capacity not yet given, sum of 1/penalty unfixed
    std::int32_t unfixed = 0;    // solver scratch: transfers crossing it without a rate yet
  };

  double capacity(const LinkData& l, double t) const { return l.schedule ? l.schedule->bytes_per_s_at(t) : l.peak; }
  void settle(FlowData& f, double now_s) const;
  void mark(Link l);
  void begin_sending(Flow f);
  void end(Flow f);  // removes it from its links and the heap, frees the slot
  bool binds(Link l) const;
  void solve_component(Link from);
  void solve_alone(Flow f);  // a transfer crossing no binding link: its bound
  void schedule_change(Link l);

  // One binary min-heap over flows (key: event_s, then order) and links (key: change_s), entries
  // encoded as flow >= 0, link as ~link.
  bool before(std::int32_t a, std::int32_t b) const;
  double key_s(std::int32_t e) const;
  std::int32_t& heap_index(std::int32_t e);
  void heap_set(std::int32_t e);  // inserts, or moves after its key changed
  void heap_remove(std::int32_t e);
  void heap_up(std::size_t i);
  void heap_down(std::size_t i);

  double tcp_gamma_;
  double now_s_ = 0;
  std::uint64_t started_ = 0;
  std::vector<FlowData> flows_;
  std::vector<Flow> free_;
  std::vector<LinkData> links_;
  std::vector<Link> dirty_;
  std::vector<Flow> dirty_flows_;
  std::uint32_t round_ = 0;
  std::vector<std::int32_t> heap_;
  std::vector<Link> comp_links_;  // solver scratch
  std::vector<Flow> comp_flows_;
};

}  // namespace coinfer::sim
