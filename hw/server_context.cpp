#include "hw/server_context.hpp"

#include "core/log.hpp"
#include "core/text_util.hpp"

namespace coinfer::hw {

void ServerContext::log(const std::string& raw) const {
  const std::string line = printable(raw, 20000);
  if (opt.log)
    opt.log(line);
  else
    log::info("serve", line);
}

void ServerContext::log_throttled(const std::string& kind, const std::string& line) {
  std::string note;
  if (stranger_log_.allow(kind, now(), &note)) log(note + line);
}

void ServerContext::reject(Connection& c, const std::string& peer, const std::string& why) {
  log_throttled("refusal", "rejected " + peer + ": " + why);
  try {
    c.send({MsgType::error, 0, encode_error(why)}, Seconds(2));
  } catch (const std::exception&) {
  }
  c.close();
}

void ServerContext::reply(const std::shared_ptr<Handler>& h, std::uint64_t task, const ResultHeader& header, const std::string& out) {
  if (!h->alive) return;
  try {
    ResultHeader r = header;
    if (r.t_sent == 0) r.t_sent = unix_now();  // where it starts crossing the device's link (core/mobility.hpp)
    std::string payload = pack_result(r, out);
    if (!r.copy && sc.mobility.mid_transfer == MobilitySpec::MidTransfer::resend) {
      std::lock_guard<std::mutex> lock(h->recent_mutex);
      if (h->recent_results.size() >= Handler::kRecentResults) h->recent_results.pop_front();
      h->recent_results.emplace_back(task, payload.size());
    }
    h->conn->send({MsgType::result, task, std::move(payload)});
  } catch (const std::exception& e) {
    log("result for " + h->id + " task " + std::to_string(task) + " not delivered: " + e.what());
  }
}

void ServerContext::apply_shaping(Handler& h) const {
  const double latency = one_way_latency_s(sc, static_cast<size_t>(h.index));
  if (opt.shape)
    h.conn->set_shaping({0, latency, shared_schedules[static_cast<size_t>(h.index)], opt.epoch_unix_s});
  else if (opt.shape_latency)
    h.conn->set_shaping({0, latency, nullptr, 0});
}

}  // namespace coinfer::hw
