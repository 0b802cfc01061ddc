#pragma once
// Per-device co-inference strategy (docs/ARCHITECTURE.md, "Vocabulary").
#include <string>

#include "core/placement.hpp"

namespace coinfer {

struct Strategy {
  enum class Kind { local, offload, pp, data_parallel };
  Kind kind = Kind::local;
  int split = 0;  // pp(k) only: device runs [0,k), server [k,n)
  // pp(k,m) only (a cloud tier): > 0 when the device's server runs [k,m) and passes
  // each request on to its cloud server (servers[].cloud), which runs [m,n); k < m < n. 0: no cloud part.
  int cloud_split = 0;
  // The execution variant to run (core/model_variant.hpp), chosen by a scheduler among those the LUTs
  // hold: "" = the device's model as the scenario names it, "fp32" = the base model, otherwise a
  // canonical variant name ("dense_mask+int8"). Text form: "pp(2)@int8".
  std::string variant;
  // Where the device's stages run among its processors (core/placement.hpp): empty = on its default
  // processor. Only local and pp(k) with k > 0 have device stages to place. Text form:
  // "pp(3)[cpu:0-1,gpu:1-3]@int8".
  Placement placement;

  static Strategy local() { return {Kind::local, 0, 0, {}, {}}; }
  static Strategy offload() { return {Kind::offload, 0, 0, {}, {}}; }
  static Strategy pp(int k) { return {Kind::pp, k, 0, {}, {}}; }
  static Strategy pp(int k, int m) { return {Kind::pp, k, m, {}, {}}; }
  static Strategy data_parallel() { return {Kind::data_parallel, 0, 0, {}, {}}; }
  // The strategy whose device part is [0, k) of an n-stage model: k = 0 is offload, k = n local,
  // anything between pp(k).
  static Strategy at_split(int k, int num_stages) { return k <= 0 ? offload() : k >= num_stages ? local() : pp(k); }

  // Device stages are [0, device_split(n)); server stages are the rest. local -> n, offload -> 0,
  // pp(k) -> k. data_parallel has no fixed split (each input runs whole on one side): returns -1.
  int device_split(int num_stages) const;
  // The stages [0, k) a placement covers: device_split, except data_parallel, whose inputs kept on the
  // device run all of them (num_stages).
  int placed_stages(int num_stages) const { return kind == Kind::data_parallel ? num_stages : device_split(num_stages); }
  // The end of the server part at the device's server: cloud_split when there is a cloud part, else n.
  int server_end(int num_stages) const { return kind == Kind::pp && cloud_split > 0 ? cloud_split : num_stages; }
  bool has_cloud_part() const { return kind == Kind::pp && cloud_split > 0; }
  // "local", "offload", "pp(3)", "pp(1,3)", "data_parallel", "pp(3)@int8", "pp(3)[cpu:0-1,gpu:1-3]"
  std::string to_string() const;
  // The same placement with a variant chosen.
  Strategy with_variant(std::string v) const {
    Strategy s = *this;
    s.variant = std::move(v);
    return s;
  }
  bool operator==(const Strategy& o) const {
    return kind == o.kind && (kind != Kind::pp || (split == o.split && cloud_split == o.cloud_split)) && variant == o.variant &&
           placement == o.placement;
  }
  bool operator!=(const Strategy& o) const { return !(*this == o); }
};

// Parses "local", "offload", "pp(K)", "pp(K,M)" (K < M: a cloud part) or "data_parallel", optionally followed by a placement "[...]"
// (local and pp(K) only) and by "@VARIANT" ("fp32" or a variant name, stored canonically). Throws std::invalid_argument listing the allowed forms. The
// split range is checked against a model elsewhere (ModelSpec::check_split).
Strategy parse_strategy(const std::string& text);

// The model a device runs under `s`: its configured model ("gcn" or "gcn@int8") when s names no
// variant, else the configured model's base with s's variant ("fp32": the base itself).
std::string model_under(const std::string& configured_model, const Strategy& s);

}  // namespace coinfer
