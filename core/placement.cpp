#include "core/placement.hpp"

#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>

namespace coinfer {

namespace {

const char* kForms = "allowed: PROC, PROC:A-B, PROC*SHARE+PROC:A-B (parts separated by commas, e.g. cpu:0-1,gpu:1-3)";

bool is_name(const std::string& s) {
  if (s.empty() || s.size() > 64) return false;
  for (char c : s)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-')) return false;
  return std::isalpha(static_cast<unsigned char>(s[0])) != 0;
}

int stage_number(const std::string& s, const std::string& part) {
  bool ok = !s.empty() && s.size() < 6;
  for (char c : s) ok = ok && std::isdigit(static_cast<unsigned char>(c));
  if (!ok) throw std::invalid_argument("placement part '" + part + "': '" + s + "' is not a stage number; " + kForms);
  return std::atoi(s.c_str());
}

std::string share_text(double x) {
  char b[32];
  std::snprintf(b, sizeof b, "%.6g", x);
  return b;
}

PlacementPart parse_part(const std::string& part, bool sole) {
  PlacementPart p;
  std::string procs = part;
  const size_t colon = part.find(':');
  if (colon != std::string::npos) {
    procs = part.substr(0, colon);
    const std::string range = part.substr(colon + 1);
    const size_t dash = range.find('-');
    if (dash == std::string::npos) throw std::invalid_argument("placement part '" + part + "': a range is A-B (stages [A,B)); " + kForms);
    p.begin = stage_number(range.substr(0, dash), part);
    p.end = stage_number(range.substr(dash + 1), part);
    if (p.end <= p.begin)
      throw std::invalid_argument("placement part '" + part + "': the range " + std::to_string(p.begin) + "-" + std::to_string(p.end) +
                                  " is empty (A-B means stages [A,B), B > A)");
  } else if (!sole) {
    throw std::invalid_argument("placement part '" + part + "': with several parts each names its stages (PROC:A-B); " + kForms);
  }
  const size_t plus = procs.find('+');
  if (plus == std::string::npos) {
    p.processor = procs;
  } else {
    const std::string first = procs.substr(0, plus);
    p.with = procs.substr(plus + 1);
    const size_t star = first.find('*');
    if (star == std::string::npos)
      throw std::invalid_argument("placement part '" + part + "': a split stage says the first processor's share (gpu*0.75+cpu); " + kForms);
    p.processor = first.substr(0, star);
    const std::string share = first.substr(star + 1);
    char* end = nullptr;
    p.share = std::strtod(share.c_str(), &end);
    if (share.empty() || end != share.c_str() + share.size() || !(p.share > 0 && p.share < 1))
      throw std::invalid_argument("placement part '" + part + "': share '" + share + "' must be a number strictly between 0 and 1");
    if (!is_name(p.with)) throw std::invalid_argument("placement part '" + part + "': '" + p.with + "' is not a processor name");
    if (p.with == p.processor) throw std::invalid_argument("placement part '" + part + "': a stage split between '" + p.with + "' and itself");
  }
  if (!is_name(p.processor)) throw std::invalid_argument("placement part '" + part + "': '" + p.processor + "' is not a processor name; " + kForms);
  return p;
}

}  // namespace

Placement parse_placement(const std::string& text) {
  Placement out;
  if (text.empty()) throw std::invalid_argument("an empty placement '[]'; " + std::string(kForms));
  std::vector<std::string> parts;
  size_t from = 0;
  while (true) {
    const size_t comma = text.find(',', from);
    parts.push_back(text.substr(from, comma == std::string::npos ? std::string::npos : comma - from));
    if (comma == std::string::npos) break;
    from = comma + 1;
  }
  if (parts.size() > 64) throw std::invalid_argument("a placement of " + std::to_string(parts.size()) + " parts (at most 64)");
  for (const auto& p : parts) out.parts.push_back(parse_part(p, parts.size() == 1));
  for (size_t i = 1; i < out.parts.size(); ++i)
    if (out.parts[i].begin != out.parts[i - 1].end)
      throw std::invalid_argument("placement '" + text + "': part " + std::to_string(i + 1) + " starts at stage " +
                                  std::to_string(out.parts[i].begin) + ", not where part " + std::to_string(i) + " ends (" +
                                  std::to_string(out.parts[i - 1].end) + ")");
  if (out.parts.size() > 1 && out.parts[0].begin != 0) throw std::invalid_argument("placement '" + text + "': the first part must start at stage 0");
  return out;
}

std::string Placement::to_string() const {
  if (parts.empty()) return "";
  std::string out = "[";
  for (size_t i = 0; i < parts.size(); ++i) {
    const PlacementPart& p = parts[i];
    if (i) out += ",";
    out += p.with.empty() ? p.processor : p.processor + "*" + share_text(p.share) + "+" + p.with;
    if (p.end >= 0) out += ":" + std::to_string(p.begin) + "-" + std::to_string(p.end);
  }
  return out + "]";
}

std::vector<PlacementPart> Placement::resolved(int device_split) const {
  std::vector<PlacementPart> out = parts;
  if (out.size() == 1 && out[0].end < 0) {
    out[0].begin = 0;
    out[0].end = device_split;
  }
  if (device_split <= 0) throw std::invalid_argument("placement " + to_string() + " for a strategy with no device stages (offload)");
  if (out.empty()) return out;
  if (out.front().begin != 0 || out.back().end != device_split)
    throw std::invalid_argument("placement " + to_string() + " covers stages [" + std::to_string(out.front().begin) + "," +
                                std::to_string(out.back().end) + "), the device runs [0," + std::to_string(device_split) + ")");
  return out;
}

std::vector<std::string> Placement::processors() const {
  std::vector<std::string> out;
  auto add = [&out](const std::string& n) {
    for (const auto& x : out)
      if (x == n) return;
    out.push_back(n);
  };
  for (const auto& p : parts) {
    add(p.processor);
    if (!p.with.empty()) add(p.with);
  }
  return out;
}

}  // namespace coinfer
