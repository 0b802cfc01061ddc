#pragma once
// Unit conversions used across modules: one definition each.
namespace coinfer {

// Link rates are given in Mbit/s (10^6 bit/s); transfers are computed in bytes per second.
constexpr double mbps_to_bytes_per_s(double mbps) { return mbps * 1e6 / 8; }
constexpr double bytes_per_s_to_mbps(double bytes_per_s) { return bytes_per_s * 8 / 1e6; }

}  // namespace coinfer
