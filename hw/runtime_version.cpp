#include "hw/runtime_version.hpp"

#include <sys/utsname.h>

#include "hw/protocol.hpp"

#ifndef COINFER_VERSION_STRING
#define COINFER_VERSION_STRING "unknown"
#endif

namespace coinfer::hw {

nlohmann::json runtime_version() {
#if defined(__x86_64__)
  const char* built_for = "x86_64";
#elif defined(__aarch64__)
  const char* built_for = "aarch64";
#elif defined(__arm__)
  const char* built_for = "armv7l";
#else
  const char* built_for = "unknown";
#endif
  struct utsname u {};
  ::uname(&u);
  return {{"coinfer", COINFER_VERSION_STRING},
          {"protocol", static_cast<int>(kProtocolVersion)},
          {"built_for", built_for},
          {"machine", std::string(u.machine)},
          {"unix_time_s", unix_now()}};
}

std::optional<nlohmann::json> parse_runtime_version(const std::string& printed) {
  try {
    nlohmann::json v = nlohmann::json::parse(printed);
    if (!v.is_object() || !v.contains("coinfer") || !v["coinfer"].is_string() || !v.contains("protocol") || !v["protocol"].is_number_integer())
      return std::nullopt;
    return v;
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

std::string describe_runtime(const nlohmann::json& v) {
  return "coinfer " + v.value("coinfer", std::string("?")) + " (wire protocol " + std::to_string(v.value("protocol", -1)) + ")";
}

bool same_runtime(const nlohmann::json& a, const nlohmann::json& b) {
  return a.value("coinfer", std::string()) == b.value("coinfer", std::string()) && a.value("protocol", -1) == b.value("protocol", -1);
}

}  // namespace coinfer::hw
