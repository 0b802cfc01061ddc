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

}  // namespace coinfer::hw
