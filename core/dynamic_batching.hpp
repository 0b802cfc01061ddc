#pragma once
// SparOA's dynamic batching (Alg. 2, Sec. 5.2) as an edge-server policy, engine-free: the largest
// batch a batch group may reach, chosen by gradient steps on the per-request latency, halved over the
// memory limit or the real-time bound, doubled for sparse inputs. Both engines' servers ask it through
// core/server_timing.hpp, once per batch group (a group's LUT entries do not change during a run).
//
// Our reading of Alg. 2 (each departure stated):
//   L(B)   the per-request seconds of a batch of B: the LUT's batch seconds at B / B, linear between
//          integer sizes (the paper's "inference latency of the current batch size"; the batch's own
//          seconds would make the gradient step shrink every batch to 1);
//   line 7 dL/dB by a central difference of one request (one-sided at 1 and max_size);
//   line 8 B <- B - eta dL/dB with L in milliseconds (eta in requests per ms per request; the paper
//          gives no value: 4 by default), B kept within [1, max_size];
//   line 9 halve when M(B) > M_max OR the batch's seconds exceed the real-time bound (the printed "and"
//          would let a batch overflow memory whenever it meets the bound, which the text rules out:
//          "if the current batch size exceeds available memory, it is halved"); M(B) is the LUT's
//          peak memory at the next integer size (a table without it: no memory check). A size found
//          over a limit is never stepped to again (later steps stay below it): where the per-request
//          latency falls with B, as on every batching server, the printed loop otherwise oscillates
//          between the step up and the halving until max_iterations;
//   line 12 a group whose input sparsity (the LUT's output sparsity of the stage before its split;
//          none measured, or split 0: skipped) exceeds the threshold doubles B, capped at the largest
//          size that fits the memory limit (the paper's min(2B, M_max) mixes units);
//   line 14 the intensity branch is not applied: the server has no per-input intensity (stated);
//   line 6 stop when |L(B) - L(B_prev)| <= epsilon (default 0.01 ms), or after max_iterations (100).
// The result is B rounded to the nearest integer in [1, max_size].
#include <cmath>
#include <functional>
#include <limits>
#include <optional>
#include <string>
#include <vector>

namespace coinfer {

struct DynamicBatchingParams {
  double learning_rate = 4;  // eta, requests per (ms per request)
  double epsilon_ms = 0.01;  // convergence threshold on L, ms per request
  int max_iterations = 100;
  double memory_bytes = std::numeric_limits<double>::infinity();         // M_max
  double real_time_s = std::numeric_limits<double>::infinity();          // T_real-time, a batch's seconds
  double sparsity_threshold = std::numeric_limits<double>::quiet_NaN();  // NaN: the sparsity branch is off
};

// What the policy reads of one batch group (the server's LUT for its model and split).
struct DynamicBatchingInputs {
  int initial = 1;                                              // B0: the server's batch.max_size
  int max_size = 1;                                             // the largest size the LUT is checked for (the same)
  std::function<double(int)> batch_seconds;                     // a batch of b, seconds
  std::function<std::optional<double>(int)> peak_memory_bytes;  // of a batch of b; nullopt: unknown
  std::optional<double> input_sparsity;                         // nullopt: not measured
};

struct DynamicBatchingResult {
  int batch = 1;
  int iterations = 0;
  std::vector<double> trace;  // B after each iteration (for tests and the decision's record)
};

DynamicBatchingResult sparoa_batch_size(const DynamicBatchingInputs& in, const DynamicBatchingParams& p);

}  // namespace coinfer
