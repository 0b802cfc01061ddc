#include "hw/cloud_link.hpp"

#include <chrono>

#include "hw/auth.hpp"
#include "hw/frame.hpp"

namespace coinfer::hw {

namespace {
using Seconds = std::chrono::duration<double>;
double steady_s() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }
}  // namespace

CloudLink::CloudLink(Options o, ResultFn on_result, std::function<void(const std::string&)> log)
    : o_(std::move(o)), on_result_(std::move(on_result)), log_(std::move(log)) {
  sender_ = std::thread([this] { sender_loop(); });
}

CloudLink::~CloudLink() { close(); }

void CloudLink::submit(std::uint64_t id, const TaskHeader& header, std::string state_bytes) {
  std::lock_guard<std::mutex> lock(m_);
  queue_.push_back({id, header, std::move(state_bytes), steady_s() + o_.wait_s});
  cv_.notify_all();
}

size_t CloudLink::at_cloud() const {
  std::lock_guard<std::mutex> lock(m_);
  return sent_.size();
}
size_t CloudLink::queued() const {
  std::lock_guard<std::mutex> lock(m_);
  return queue_.size();
}

void CloudLink::fail(std::uint64_t id, const std::string& why) {
  ResultHeader r;
  r.ok = false;
  r.error = why;
  on_result_(id, r, "");
}

// The connection `c` ended: everything the cloud held on it fails with `why` (once: a later call for
// the same connection finds it gone).
void CloudLink::lose(const std::shared_ptr<Connection>& c, const std::string& why) {
  std::map<std::uint64_t, bool> lost;
  bool closing = false;
  {
    std::lock_guard<std::mutex> lock(m_);
    if (conn_ != c) return;
    conn_.reset();
    lost.swap(sent_);
    closing = closing_;
  }
  c->close();
  if (!closing) log_("cloud " + o_.cloud_id + ": " + why + (lost.empty() ? "" : "; " + std::to_string(lost.size()) + " requests it held fail"));
  for (const auto& [id, unused] : lost) fail(id, why);
}

void CloudLink::drop_connection(const std::string& why) {
  std::shared_ptr<Connection> c;
  {
    std::lock_guard<std::mutex> lock(m_);
    c = conn_;
  }
  if (c) lose(c, why);
}

std::shared_ptr<Connection> CloudLink::connect(const std::string& address) {
  const auto [host, port] = split_address(address, "cloud");
  std::shared_ptr<Connection> c = Connection::connect(host, port, Seconds(2));
  auto hello = c->receive(Seconds(5));
  if (!hello || hello->type != MsgType::hello) throw ConnectionClosed("no hello from the cloud");
  const Hello h = decode_hello(hello->payload);
  c->send(
      {MsgType::cloud_register, 0, encode(PeerRegistration{o_.edge_id, o_.edge_address, hmac_sha256_hex(o_.secret, h.nonce + "edge:" + o_.edge_id)})},
      Seconds(5));
  auto ack = c->receive(Seconds(5));  // a heartbeat: accepted; an error frame says why not
  if (!ack) throw ConnectionClosed("the cloud did not answer the registration within 5 s");
  if (ack->type == MsgType::error) throw ConnectionClosed("the cloud refused the registration: " + decode_error(ack->payload));
  if (ack->type != MsgType::heartbeat) throw ProtocolError(std::string("expected the cloud's acknowledgement, got ") + to_string(ack->type));
  c->set_max_payload(kDefaultMaxPayload);
  c->set_shaping(o_.shaping);
  return c;
}

std::shared_ptr<Connection> CloudLink::connected(std::unique_lock<std::mutex>& lock) {
  if (conn_) return conn_;
  if (steady_s() < retry_at_) return nullptr;
  retry_at_ = steady_s() + o_.retry_s;
  lock.unlock();
  const std::string address = o_.address ? o_.address() : std::string();
  std::shared_ptr<Connection> c;
  std::string error;
  try {
    if (address.empty()) throw ConnectionClosed("its address is not known yet");
    c = connect(address);
  } catch (const std::exception& e) {
    error = e.what();
  }
  lock.lock();
  if (!c) {
    if (error != last_error_) log_("cloud " + o_.cloud_id + (address.empty() ? "" : " at " + address) + " cannot be reached: " + error);
    last_error_ = error;
    return nullptr;
  }
  log_("connected to cloud " + o_.cloud_id + " at " + address);
  last_error_.clear();
  if (reader_.joinable()) {  // the last connection's reader has ended or is ending (lose() closed it)
    lock.unlock();
    reader_.join();
    lock.lock();
  }
  conn_ = c;
  reader_ = std::thread([this, c] { reader_loop(c); });
  return c;
}

void CloudLink::sender_loop() {
  std::unique_lock<std::mutex> lock(m_);
  double last_sent = steady_s();
  while (!closing_) {
    if (queue_.empty()) {
      cv_.wait_for(lock, Seconds(0.2));
      // An idle connection says it is alive: the cloud closes one silent for kCloudSilenceS.
      if (conn_ && !closing_ && steady_s() - last_sent >= kCloudHeartbeatS) {
        std::shared_ptr<Connection> c = conn_;
        last_sent = steady_s();
        lock.unlock();
        std::string error;
        try {
          c->send({MsgType::heartbeat, 0, ""}, Seconds(5));
        } catch (const std::exception& e) {
          error = e.what();
        }
        if (!error.empty()) lose(c, "connection to cloud " + o_.cloud_id + " lost: " + error);
        lock.lock();
      }
      continue;
    }
    std::shared_ptr<Connection> c = connected(lock);
    if (closing_) break;
    if (!c) {
      // Not reachable now: what has waited long enough fails, the rest waits for the next attempt.
      std::vector<Job> expired;
      const double now = steady_s();
      for (auto it = queue_.begin(); it != queue_.end();)
        if (it->give_up_at <= now) {
          expired.push_back(std::move(*it));
          it = queue_.erase(it);
        } else {
          ++it;
        }
      const std::string why = "cloud " + o_.cloud_id + " cannot be reached: " + last_error_;
      lock.unlock();
      for (const Job& j : expired) fail(j.id, why);
      std::this_thread::sleep_for(Seconds(o_.retry_s / 2));
      lock.lock();
      continue;
    }
    Job job = std::move(queue_.front());
    queue_.pop_front();
    sent_[job.id] = true;  // before sending: its result may overtake this thread
    lock.unlock();
    std::string error;
    last_sent = steady_s();
    try {
      c->send({MsgType::task, job.id, pack_task(job.header, job.state)}, Seconds(60));
    } catch (const std::exception& e) {
      error = e.what();
    }
    if (!error.empty()) lose(c, "connection to cloud " + o_.cloud_id + " lost: " + error);
    lock.lock();
  }
  // Closing: what is still queued fails.
  std::deque<Job> left;
  left.swap(queue_);
  lock.unlock();
  for (const Job& j : left) fail(j.id, "the edge server is stopping");
}

void CloudLink::reader_loop(std::shared_ptr<Connection> c) {
  std::string why;
  try {
    for (;;) {
      auto f = c->receive(Seconds(0.5));
      {
        std::lock_guard<std::mutex> lock(m_);
        if (closing_ || conn_ != c) return;
      }
      if (!f) continue;
      if (f->type == MsgType::heartbeat) continue;
      if (f->type == MsgType::error) throw ConnectionClosed("the cloud said: " + decode_error(f->payload));
      if (f->type != MsgType::result) throw ProtocolError(std::string("unexpected ") + to_string(f->type) + " message from the cloud");
      {
        std::lock_guard<std::mutex> lock(m_);
        if (!sent_.erase(f->task_id)) throw ProtocolError("a result for task " + std::to_string(f->task_id) + ", which the cloud does not hold");
      }
      std::string out;
      const ResultHeader h = unpack_result(f->payload, out);
      on_result_(f->task_id, h, std::move(out));
    }
  } catch (const std::exception& e) {
    why = e.what();
  }
  lose(c, "connection to cloud " + o_.cloud_id + " lost: " + why);
}

void CloudLink::close() {
  std::shared_ptr<Connection> c;
  {
    std::lock_guard<std::mutex> lock(m_);
    if (closing_ && !sender_.joinable()) return;
    closing_ = true;
    c = conn_;
    cv_.notify_all();
  }
  if (sender_.joinable()) sender_.join();
  if (c) lose(c, "the edge server is stopping");
  if (reader_.joinable()) reader_.join();
}

}  // namespace coinfer::hw
