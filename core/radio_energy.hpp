#pragma once
// A device radio's energy with power states, engine-free: the simulator tells the meter
// when each of the device's transfers starts and ends (simulated seconds) and reads the energy at the
// end; the estimator uses the same model per inference (sched/analytic_estimator.cpp). Units: W, s, J,
// bytes; rates in Mbit/s (1e6 bits per second).
//
// The model (Huang et al., "A Close Examination of Performance and Power Characteristics of 4G LTE
// Networks", MobiSys 2012, Sec. 3-4; the figures of its WiFi and LTE radios are in traces/devices.yaml
// `radios:` with that source):
//   - active (some transfer in progress): base_w + up_w_per_mbps x uplink rate + down_w_per_mbps x
//     downlink rate. Integrated, a transfer of B bytes costs its rate term regardless of its duration
//     (W per Mbit/s x Mbit/s x s = J per Mbit x Mbit): active energy = base_w x (seconds some transfer
//     is in progress, the union) + up_w_per_mbps x Mbit sent + down_w_per_mbps x Mbit received.
//   - tail: after the last transfer ends the radio stays in a high-power state for tail_s at tail_w
//     (LTE's RRC_CONNECTED tail, WiFi's short one); a transfer starting within the tail starts at once.
//   - idle: idle_w otherwise (before the first transfer, and tail_s after the last one).
//   - promotion: a transfer starting from idle (no transfer yet, or more than tail_s after the last one
//     ended) first costs promotion_w x promotion_s. DEPARTURE from the paper: the promotion's delay
//     is not added to the transfer (the link model owns timing); only its energy is counted, at the
//     transfer's start, on top of the idle power of that moment.
// Energy is counted inside the measurement window [window_begin_s, window_end_s]: state powers over
// the part of each span inside it; a transfer's rate term by the share of its duration inside it; a
// promotion when its transfer starts inside it.
// Which transfers: the device's own requests' uploads and results (as the flat J/MB rate counts them);
// scheduling messages and helper batches are not counted.
#include <string>

namespace coinfer {

struct RadioStates {
  std::string name;            // the traces/devices.yaml radios: entry ("wifi", "lte"), "" when stated inline
  double base_w = 0;           // active: the base power while any transfer is in progress
  double up_w_per_mbps = 0;    // active: W added per Mbit/s sent (= J per Mbit sent)
  double down_w_per_mbps = 0;  // active: W added per Mbit/s received (= J per Mbit received)
  double tail_w = 0, tail_s = 0;
  double idle_w = 0;
  double promotion_w = 0, promotion_s = 0;
  std::string source;  // where the figures come from
  bool stated() const { return base_w > 0 || up_w_per_mbps > 0 || down_w_per_mbps > 0 || tail_w > 0 || idle_w > 0 || promotion_w > 0; }
  bool operator==(const RadioStates& o) const {
    return name == o.name && base_w == o.base_w && up_w_per_mbps == o.up_w_per_mbps && down_w_per_mbps == o.down_w_per_mbps && tail_w == o.tail_w &&
           tail_s == o.tail_s && idle_w == o.idle_w && promotion_w == o.promotion_w && promotion_s == o.promotion_s && source == o.source;
  }
};

struct RadioEnergy {
  double active_j = 0;  // base power over active seconds + the rate terms
  double tail_j = 0;
  double idle_j = 0;
  double promotion_j = 0;
  double active_s = 0, tail_s = 0;  // seconds in the window the radio spent active and in its tail
  double total_j() const { return active_j + tail_j + idle_j + promotion_j; }
};

// Integrates one device radio's power over the window as transfers start and end. Times must not
// decrease from call to call; every transfer_ended matches an earlier transfer_started. Not thread-safe.
class RadioEnergyMeter {
 public:
  RadioEnergyMeter() = default;
  RadioEnergyMeter(const RadioStates& states, double window_begin_s, double window_end_s);
  void transfer_started(double t_s);
  // The transfer that started at started_s ends at t_s, having moved `bytes` up (uplink) or down.
  void transfer_ended(double started_s, double t_s, double bytes, bool uplink);
  // Transfers still in progress at t_s stop there (the device left or the run stopped): the radio goes
  // to its tail as if they had ended, their rate terms not counted.
  void cut_transfers(double t_s);
  // The energy from the window's start to its end (the state after the last event runs on to it).
  RadioEnergy energy() const;

 private:
  // Adds the power of the state held since mark_s_ over [mark_s_, t) inside the window to `e`.
  void integrate(double t_s, RadioEnergy& e) const;
  RadioStates m_;
  double begin_s_ = 0, end_s_ = 0;
  int active_ = 0;
  double mark_s_ = 0;  // integrated up to here
  bool ever_active_ = false;
  double last_end_s_ = 0;  // when the radio last became inactive
  RadioEnergy e_;
};

// Per inference, for a device that makes `transfers_per_inference` transfers per inference, each
// inference taking `cycle_s` on average (1 / its throughput), its transfers together `active_s`,
// moving up_bytes and down_bytes: the radio's energy per inference with the gaps between transfers all
// equal, (cycle_s - active_s) / transfers_per_inference (the estimator's approximation; exact for a
// periodic stream of non-overlapping transfers).
double radio_energy_per_inference(const RadioStates& m, double cycle_s, double active_s, double up_bytes, double down_bytes,
                                  int transfers_per_inference);

}  // namespace coinfer
