#include "io/device_population.hpp"

#include <algorithm>
#include <cmath>

#include "core/limits.hpp"
#include "core/random_stream.hpp"
#include "core/text_util.hpp"

namespace coinfer {

namespace {

struct DrawnKey {
  const char* section;  // "" for the entry itself, else the sub-map
  const char* key;
  bool text;     // a name (type): choice only
  bool integer;  // drawn values are whole numbers
};
// In draw order (a device's stream gives one uniform to each, drawn or not).
constexpr DrawnKey kKeys[] = {{"", "type", true, false},
                              {"", "join_at_s", false, false},
                              {"link", "bandwidth_mbps", false, false},
                              {"link", "latency_ms", false, false},
                              {"workload", "rate_per_s", false, false},
                              {"workload", "in_flight", false, true}};
constexpr int kNumKeys = static_cast<int>(sizeof(kKeys) / sizeof(kKeys[0]));
constexpr std::size_t kMaxChoices = 1000;

YAML::Node value_at(const YAML::Node& entry, const DrawnKey& k) {
  if (!entry.IsMap()) return YAML::Node();
  if (*k.section == '\0') return entry[k.key];
  const YAML::Node sub = entry[k.section];
  return sub && sub.IsMap() ? sub[k.key] : YAML::Node();
}

std::string key_name(const std::string& path, const DrawnKey& k) { return path + "." + (*k.section ? std::string(k.section) + "." : "") + k.key; }

double number_of(const YamlReader& r, const YAML::Node& node, const std::string& key) {
  if (!node.IsScalar()) r.fail(node, key, "expected a number");
  try {
    const double v = node.as<double>();
    if (!std::isfinite(v)) r.fail(node, key, "expected a finite number");
    return v;
  } catch (const YAML::Exception&) {
    r.fail(node, key, "expected a number, got '" + printable(node.Scalar(), 100) + "'");
  }
}

}  // namespace

bool DevicePopulation::has_distributions(const YAML::Node& entry) {
  for (const DrawnKey& k : kKeys) {
    const YAML::Node v = value_at(entry, k);
    if (v && v.IsMap()) return true;
  }
  return false;
}

std::size_t DevicePopulation::Distribution::pick(double u) const {
  const auto it = std::lower_bound(cumulative.begin(), cumulative.end(), u);
  return std::min(static_cast<std::size_t>(it - cumulative.begin()), cumulative.size() - 1);
}

double DevicePopulation::Distribution::number(double u, bool integer) const {
  if (!uniform) return numbers[pick(u)];
  if (integer) return std::min(hi, lo + std::floor(u * (hi - lo + 1)));
  return lo + u * (hi - lo);
}

DevicePopulation::Distribution DevicePopulation::read_distribution(const YamlReader& r, const YAML::Node& node, const std::string& key, bool text,
                                                                   bool integer) const {
  Distribution d;
  d.given = true;
  const std::string allowed = text ? "{choice: [...], weights: [...]}" : "{uniform: [min, max]} or {choice: [...], weights: [...]}";
  if (node["uniform"] && node["choice"]) r.fail(node, key, "give one of uniform and choice");
  if (text)
    r.check_keys(node, {"choice", "weights"}, key);
  else
    r.check_keys(node, {"uniform", "choice", "weights"}, key);
  if (node["uniform"]) {
    if (node["weights"]) r.fail(node["weights"], key + ".weights", "only with choice");
    const YAML::Node u = node["uniform"];
    if (!u.IsSequence() || u.size() != 2) r.fail(u, key + ".uniform", "expected [min, max]");
    d.uniform = true;
    d.lo = number_of(r, u[0], key + ".uniform");
    d.hi = number_of(r, u[1], key + ".uniform");
    if (d.lo > d.hi) r.fail(u, key + ".uniform", "expected [min, max] with min <= max");
    if (integer && (d.lo != std::floor(d.lo) || d.hi != std::floor(d.hi))) r.fail(u, key + ".uniform", "expected whole numbers");
    d.values = {u[0], u[1]};  // both ends are checked as plain values
    return d;
  }
  const YAML::Node c = node["choice"];
  if (!c) r.fail(node, key, "expected " + allowed);
  if (!c.IsSequence() || c.size() == 0 || c.size() > kMaxChoices)
    r.fail(c, key + ".choice", "expected a list of 1 to " + std::to_string(kMaxChoices) + " values");
  for (const YAML::Node& v : c) {
    if (!v.IsScalar()) r.fail(v, key + ".choice", "expected plain values");
    d.values.push_back(v);
    if (!text) d.numbers.push_back(number_of(r, v, key + ".choice"));
  }
  std::vector<double> weights(d.values.size(), 1.0);
  if (const YAML::Node w = node["weights"]) {
    if (!w.IsSequence() || w.size() != d.values.size())
      r.fail(w, key + ".weights", "expected one weight per choice (" + std::to_string(d.values.size()) + ")");
    for (std::size_t i = 0; i < weights.size(); ++i) {
      weights[i] = number_of(r, w[i], key + ".weights");
      if (weights[i] < 0 || weights[i] > 1e12) r.fail(w[i], key + ".weights", "expected a weight in [0, 1e12]");
    }
  }
  double total = 0;
  for (double w : weights) total += w;
  if (!(total > 0)) r.fail(node, key + ".weights", "at least one weight must be > 0");
  double run = 0;
  for (double w : weights) d.cumulative.push_back((run += w) / total);
  d.cumulative.back() = 1.0;
  return d;
}

DeviceSpec DevicePopulation::read_with_values(const YAML::Node& entry, const std::vector<std::pair<int, YAML::Node>>& set,
                                              const ReadOne& read_one) const {
  // The entry's own nodes, each drawn key pointed at the given value for the read and back at its
  // distribution afterwards. In place, not a rebuilt copy: yaml-cpp merges a whole document's node
  // memory into every node assigned from it, so copies cost the file's size each (a 5,000-device file
  // of 50 entries took 3.7 s to load). A key taken out and put back moves to its map's end.
  std::vector<std::pair<YAML::Node, YAML::Node>> restore;  // (map, its original value node), by key below
  std::vector<std::string> keys;
  for (const auto& [k, v] : set) {
    YAML::Node map = *kKeys[k].section ? entry[kKeys[k].section] : entry;
    const YAML::Node original = map[kKeys[k].key];
    map.remove(kKeys[k].key);
    map[kKeys[k].key] = v;
    restore.emplace_back(map, original);
    keys.push_back(kKeys[k].key);
  }
  const auto put_back = [&] {
    for (size_t i = restore.size(); i-- > 0;) {
      restore[i].first.remove(keys[i]);
      restore[i].first[keys[i]] = restore[i].second;
    }
  };
  try {
    DeviceSpec d = read_one(entry);
    put_back();
    return d;
  } catch (...) {
    put_back();
    throw;
  }
}

DevicePopulation::DevicePopulation(const YamlReader& r, const YAML::Node& entry, const std::string& path, std::uint64_t seed, int entry_index,
                                   const ReadOne& read_one)
    : seed_(seed), entry_index_(entry_index), dist_(kNumKeys) {
  for (int k = 0; k < kNumKeys; ++k) {
    const YAML::Node v = value_at(entry, kKeys[k]);
    if (v && v.IsMap()) dist_[static_cast<size_t>(k)] = read_distribution(r, v, key_name(path, kKeys[k]), kKeys[k].text, kKeys[k].integer);
  }
  // The first value of every drawn key: the base every check and prototype starts from.
  std::vector<std::pair<int, YAML::Node>> base;
  for (int k = 0; k < kNumKeys; ++k)
    if (dist_[static_cast<size_t>(k)].given) base.emplace_back(k, dist_[static_cast<size_t>(k)].values.front());
  const auto read_with = [&](int key, const YAML::Node& value) {
    std::vector<std::pair<int, YAML::Node>> set = base;
    for (auto& [k, v] : set)
      if (k == key) v = value;
    return read_with_values(entry, set, read_one);
  };
  // Every value each distribution can give, checked as a plain value (a range by its two ends).
  for (int k = 1; k < kNumKeys; ++k)
    for (const YAML::Node& v : dist_[static_cast<size_t>(k)].values) (void)read_with(k, v);
  // One prototype per type choice (the type's hardware, power and processors come with it).
  if (dist_[0].given)
    for (const YAML::Node& t : dist_[0].values) prototypes_.push_back(read_with(0, t));
  else
    prototypes_.push_back(read_with(-1, YAML::Node()));
}

DeviceSpec DevicePopulation::device(long long copy) const {
  RandomStream rng(seed_, StreamPurpose::device_population, (static_cast<std::uint64_t>(entry_index_) << 32) + static_cast<std::uint64_t>(copy));
  double u[kNumKeys];
  for (double& x : u) x = rng.next_unit();
  DeviceSpec d = prototypes_[dist_[0].given ? dist_[0].pick(u[0]) : 0];
  const auto drawn = [&](int k) { return dist_[static_cast<size_t>(k)].given; };
  const auto value = [&](int k) { return dist_[static_cast<size_t>(k)].number(u[k], kKeys[k].integer); };
  if (drawn(1)) d.join_at_s = value(1);
  if (drawn(2)) d.link.bandwidth_mbps = value(2);
  if (drawn(3)) d.link.latency_ms = value(3);
  if (drawn(4)) d.workload.rate_per_s = value(4);
  if (drawn(5)) d.workload.in_flight = static_cast<int>(value(5));
  return d;
}

}  // namespace coinfer
