#include "sim/flow_shares.hpp"

#include <algorithm>
#include <stdexcept>

namespace coinfer::sim {

FlowShares::Link FlowShares::add_link(double peak_bytes_per_s, double latency_s, const BandwidthSchedule* schedule) {
  LinkData l;
  l.peak = peak_bytes_per_s;
  l.latency = latency_s;
  l.schedule = (schedule != nullptr && !schedule->constant()) ? schedule : nullptr;  // constant: its peak
  links_.push_back(std::move(l));
  return static_cast<Link>(links_.size() - 1);
}

FlowShares::Flow FlowShares::start(double now_s, const Link* route, int route_length, double bytes, std::uint64_t tag) {
  if (route_length < 1 || route_length > kMaxRoute) throw std::logic_error("FlowShares::start: a route has 1 to 4 links");
  now_s_ = now_s;
  Flow id;
  if (!free_.empty()) {
    id = free_.back();
    free_.pop_back();
  } else {
    id = static_cast<Flow>(flows_.size());
    flows_.emplace_back();
  }
  FlowData& f = flows_[static_cast<size_t>(id)];
  f = FlowData{};
  f.hops = static_cast<std::int8_t>(route_length);
  double latency = 0, bound = kNever;
  for (int i = 0; i < route_length; ++i) {
    f.route[i] = route[i];
    const LinkData& l = links_[static_cast<size_t>(route[i])];
    latency += l.latency;
    bound = std::min(bound, l.peak);
  }
  if (latency > 0) bound = std::min(bound, tcp_gamma_ / (2.0 * latency));
  f.penalty = latency > 0 ? latency : 1.0;
  f.bound = bound;
  f.remaining = bytes;
  f.updated_s = now_s;
  f.order = started_++;
  f.tag = tag;
  if (latency > 0) {
    f.state = State::latency;
    f.event_s = now_s + latency;
    heap_set(id);
  } else {
    begin_sending(id);
  }
  return id;
}

void FlowShares::settle(FlowData& f, double now_s) const {
  if (f.state == State::sending && now_s > f.updated_s) f.remaining = std::max(0.0, f.remaining - f.rate * (now_s - f.updated_s));
  f.updated_s = std::max(f.updated_s, now_s);
}

double FlowShares::remaining(double now_s, Flow id) const {
  FlowData f = flows_[static_cast<size_t>(id)];
  settle(f, now_s);
  return f.remaining;
}

double FlowShares::cancel(double now_s, Flow id) {
  now_s_ = now_s;
  FlowData& f = flows_[static_cast<size_t>(id)];
  settle(f, now_s);
  const double left = f.remaining;
  end(id);
  return left;
}

void FlowShares::mark(Link l) {
  LinkData& d = links_[static_cast<size_t>(l)];
  if (d.dirty) return;
  d.dirty = true;
  dirty_.push_back(l);
}

void FlowShares::begin_sending(Flow id) {
  FlowData& f = flows_[static_cast<size_t>(id)];
  f.state = State::sending;
  f.rate = 0;
  f.event_s = kNever;
  heap_remove(id);
  for (int i = 0; i < f.hops; ++i) {
    LinkData& l = links_[static_cast<size_t>(f.route[i])];
    f.at_in_link[i] = static_cast<std::int32_t>(l.sending.size());
    l.sending.push_back(id);
    l.sum_bound += f.bound;
    if (l.sending.size() == 1) schedule_change(f.route[i]);
    mark(f.route[i]);
  }
  f.dirty = true;
  dirty_flows_.push_back(id);
}

void FlowShares::end(Flow id) {
  FlowData& f = flows_[static_cast<size_t>(id)];
  if (f.state == State::sending) {
    for (int i = 0; i < f.hops; ++i) {
      LinkData& l = links_[static_cast<size_t>(f.route[i])];
      const auto at = static_cast<size_t>(f.at_in_link[i]);
      const auto last = static_cast<std::int32_t>(l.sending.size() - 1);
      const Flow moved = l.sending.back();
      l.sending[at] = moved;
      l.sending.pop_back();
      l.sum_bound = l.sending.empty() ? 0.0 : l.sum_bound - f.bound;
      // The entry moved into the gap learns its new index (it may be this flow's own other crossing:
      // a route between two devices crosses the access point twice).
      FlowData& m = flows_[static_cast<size_t>(moved)];
      for (int k = 0; k < m.hops; ++k)
        if (m.route[k] == f.route[i] && m.at_in_link[k] == last) {
          m.at_in_link[k] = static_cast<std::int32_t>(at);
          break;
        }
      mark(f.route[i]);
    }
  }
  heap_remove(id);
  f.state = State::free;
  f.dirty = false;
  free_.push_back(id);
}

void FlowShares::schedule_change(Link id) {
  LinkData& l = links_[static_cast<size_t>(id)];
  if (l.schedule == nullptr) return;
  l.change_s = kNever;
  for (const BandwidthPoint& p : l.schedule->points())
    if (p.t_s > now_s_) {
      l.change_s = p.t_s;
      break;
    }
  if (l.change_s == kNever)
    heap_remove(~id);
  else
    heap_set(~id);
}

bool FlowShares::binds(Link id) const {
  const LinkData& l = links_[static_cast<size_t>(id)];
  return !l.sending.empty() && capacity(l, now_s_) < l.sum_bound * (1 + 1e-9);  // a margin for the sum's rounding
}

double FlowShares::next_event_s() {
  ++round_;
  // Each changed link's standing first (a solve below may reach a changed link before its turn), then
  // the components around the binding ones.
  for (const Link id : dirty_) {
    LinkData& l = links_[static_cast<size_t>(id)];
    l.dirty = false;
    const bool was = l.binding;
    l.binding = binds(id);
    if (was && !l.binding)  // it held its transfers back and no longer does: each needs its rate again
      for (Flow f : l.sending)
        if (!flows_[static_cast<size_t>(f)].dirty) {
          flows_[static_cast<size_t>(f)].dirty = true;
          dirty_flows_.push_back(f);
        }
  }
  for (const Link id : dirty_) {
    const LinkData& l = links_[static_cast<size_t>(id)];
    if (l.binding && l.round != round_) solve_component(id);
  }
  dirty_.clear();
  for (size_t i = 0; i < dirty_flows_.size(); ++i) {
    FlowData& f = flows_[static_cast<size_t>(dirty_flows_[i])];
    if (!f.dirty || f.state != State::sending) continue;
    f.dirty = false;
    if (f.round == round_) continue;
    Link through = -1;
    for (int k = 0; k < f.hops && through < 0; ++k)
      if (links_[static_cast<size_t>(f.route[k])].binding) through = f.route[k];
    if (through >= 0)
      solve_component(through);
    else
      solve_alone(dirty_flows_[i]);
  }
  dirty_flows_.clear();
  return heap_.empty() ? kNever : key_s(heap_.front());
}

void FlowShares::solve_alone(Flow id) {
  FlowData& f = flows_[static_cast<size_t>(id)];
  settle(f, now_s_);
  f.round = round_;
  f.rate = f.bound;
  f.event_s = f.rate > 0 && f.rate != kNever ? now_s_ + f.remaining / f.rate : (f.remaining > 0 ? kNever : now_s_);
  if (f.event_s == kNever)
    heap_remove(id);
  else
    heap_set(id);
}

void FlowShares::advance(double now_s, std::vector<std::uint64_t>& completed) {
  now_s_ = now_s;
  // Everything due now, earliest first; completions in their start order (the heap's tie-break).
  while (!heap_.empty() && key_s(heap_.front()) <= now_s) {
    const std::int32_t e = heap_.front();
    if (e < 0) {  // a link's capacity changes
      const Link l = ~e;
      heap_remove(e);
      mark(l);
      if (!links_[static_cast<size_t>(l)].sending.empty()) schedule_change(l);
      continue;
    }
    FlowData& f = flows_[static_cast<size_t>(e)];
    if (f.state == State::latency && f.remaining > 0) {
      f.updated_s = now_s;
      begin_sending(e);
    } else {  // all its bytes sent (or none to send once its latency has passed)
      completed.push_back(f.tag);
      end(e);
    }
  }
}

void FlowShares::solve_component(Link from) {
  // The binding links and the sending transfers connected to `from` through binding links.
  comp_links_.clear();
  comp_flows_.clear();
  links_[static_cast<size_t>(from)].round = round_;
  comp_links_.push_back(from);
  for (size_t i = 0; i < comp_links_.size(); ++i) {
    const LinkData& l = links_[static_cast<size_t>(comp_links_[i])];
    for (Flow id : l.sending) {
      FlowData& f = flows_[static_cast<size_t>(id)];
      if (f.round == round_) continue;
      f.round = round_;
      comp_flows_.push_back(id);
      for (int k = 0; k < f.hops; ++k) {
        LinkData& m = links_[static_cast<size_t>(f.route[k])];
        if (m.round == round_) continue;
        m.binding = binds(f.route[k]);
        if (!m.binding) continue;
        m.round = round_;
        comp_links_.push_back(f.route[k]);
      }
    }
  }
  for (Link id : comp_links_) {
    LinkData& l = links_[static_cast<size_t>(id)];
    l.left = capacity(l, now_s_);
    l.usage = 0;
    l.unfixed = static_cast<std::int32_t>(l.sending.size());
  }
  // A hop counts where its link is in the component (binding); the others constrain no one.
  auto counts = [&](Link id) {
    const LinkData& l = links_[static_cast<size_t>(id)];
    return l.round == round_ && l.binding;
  };
  for (Flow id : comp_flows_) {
    FlowData& f = flows_[static_cast<size_t>(id)];
    settle(f, now_s_);
    f.fixed = false;
    for (int k = 0; k < f.hops; ++k)
      if (counts(f.route[k])) links_[static_cast<size_t>(f.route[k])].usage += 1.0 / f.penalty;
  }
  // Progressive filling: the link offering the least per unit of weight saturates first, and every
  // transfer crossing it gets that level / its penalty; a transfer whose bound is lower stops there.
  size_t unfixed = comp_flows_.size();
  auto fix = [&](Flow id, double rate) {
    FlowData& f = flows_[static_cast<size_t>(id)];
    f.fixed = true;
    f.rate = rate;
    --unfixed;
    for (int k = 0; k < f.hops; ++k) {
      if (!counts(f.route[k])) continue;
      LinkData& m = links_[static_cast<size_t>(f.route[k])];
      m.left = std::max(0.0, m.left - rate);
      m.usage -= 1.0 / f.penalty;
      --m.unfixed;
    }
  };
  while (unfixed > 0) {
    double level = kNever;
    Link tight = -1;
    for (Link id : comp_links_) {
      const LinkData& l = links_[static_cast<size_t>(id)];
      if (l.unfixed == 0) continue;
      const double v = l.left / l.usage;
      if (v < level) level = v, tight = id;
    }
    Flow bounded = -1;
    double bound_level = kNever;
    for (Flow id : comp_flows_) {
      const FlowData& f = flows_[static_cast<size_t>(id)];
      if (!f.fixed && f.bound * f.penalty < bound_level) bound_level = f.bound * f.penalty, bounded = id;
    }
    if (bounded >= 0 && bound_level < level) {
      fix(bounded, flows_[static_cast<size_t>(bounded)].bound);
      continue;
    }
    if (tight < 0) throw std::logic_error("FlowShares: transfers without a rate and no link left to give one");
    const size_t before_fix = unfixed;
    for (Flow id : links_[static_cast<size_t>(tight)].sending)
      if (!flows_[static_cast<size_t>(id)].fixed) fix(id, level / flows_[static_cast<size_t>(id)].penalty);
    if (unfixed == before_fix) throw std::logic_error("FlowShares: a link counted transfers without a rate that it does not hold");
  }
  for (Flow id : comp_flows_) {
    FlowData& f = flows_[static_cast<size_t>(id)];
    f.fixed = false;
    f.event_s = f.rate > 0 ? now_s_ + f.remaining / f.rate : kNever;
    if (f.event_s == kNever)
      heap_remove(id);
    else
      heap_set(id);
  }
}

// ---- the heap ----

double FlowShares::key_s(std::int32_t e) const { return e >= 0 ? flows_[static_cast<size_t>(e)].event_s : links_[static_cast<size_t>(~e)].change_s; }

bool FlowShares::before(std::int32_t a, std::int32_t b) const {
  const double ka = key_s(a), kb = key_s(b);
  if (ka != kb) return ka < kb;
  if ((a < 0) != (b < 0)) return a < 0;  // a capacity change first: what completes then sees the new share
  if (a < 0) return ~a < ~b;
  return flows_[static_cast<size_t>(a)].order < flows_[static_cast<size_t>(b)].order;
}

std::int32_t& FlowShares::heap_index(std::int32_t e) {
  return e >= 0 ? flows_[static_cast<size_t>(e)].heap_at : links_[static_cast<size_t>(~e)].heap_at;
}

void FlowShares::heap_up(std::size_t i) {
  while (i > 0) {
    const std::size_t parent = (i - 1) / 2;
    if (!before(heap_[i], heap_[parent])) break;
    std::swap(heap_[i], heap_[parent]);
    heap_index(heap_[i]) = static_cast<std::int32_t>(i);
    heap_index(heap_[parent]) = static_cast<std::int32_t>(parent);
    i = parent;
  }
}

void FlowShares::heap_down(std::size_t i) {
  for (;;) {
    std::size_t best = i;
    for (std::size_t c = 2 * i + 1; c <= 2 * i + 2 && c < heap_.size(); ++c)
      if (before(heap_[c], heap_[best])) best = c;
    if (best == i) break;
    std::swap(heap_[i], heap_[best]);
    heap_index(heap_[i]) = static_cast<std::int32_t>(i);
    heap_index(heap_[best]) = static_cast<std::int32_t>(best);
    i = best;
  }
}

void FlowShares::heap_set(std::int32_t e) {
  std::int32_t& at = heap_index(e);
  if (at < 0) {
    at = static_cast<std::int32_t>(heap_.size());
    heap_.push_back(e);
  }
  const auto i = static_cast<std::size_t>(at);
  heap_up(i);
  heap_down(static_cast<std::size_t>(heap_index(e)));
}

void FlowShares::heap_remove(std::int32_t e) {
  std::int32_t& at = heap_index(e);
  if (at < 0) return;
  const auto i = static_cast<std::size_t>(at);
  at = -1;
  const std::int32_t last = heap_.back();
  heap_.pop_back();
  if (i == heap_.size()) return;
  heap_[i] = last;
  heap_index(last) = static_cast<std::int32_t>(i);
  heap_up(i);
  heap_down(static_cast<std::size_t>(heap_index(last)));
}

}  // namespace coinfer::sim
