#include "hw/device_context.hpp"

#include "core/device_hardware.hpp"
#include "core/log.hpp"
#include "hw/protocol.hpp"
#include "models/model_runner.hpp"

namespace coinfer::hw {

DeviceContext::~DeviceContext() = default;

double DeviceContext::device_unix() const { return unix_now() + opt.clock_skew_s; }

void DeviceContext::log(const std::string& s) const {
  if (opt.log)
    opt.log(s);
  else
    log::info("device", opt.device_id + ": " + s);
}

std::string DeviceContext::out_of_memory_text(double need_bytes, double have_bytes) const {
  return out_of_memory_reason(opt.device_id, memory_processor, need_bytes, have_bytes);
}

std::string DeviceContext::scheduled_failure_reason(double t, int server) const {
  if (!availability.any() || server < 0 || availability.up_at(server, t + 0.25)) return "";
  return server_failed_reason(sc.servers[static_cast<size_t>(server)].id, availability.failed_at(server, t + 0.25));
}

}  // namespace coinfer::hw
