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

void CloudLink::submit(std::uint64_t id, const std::string& address, const TaskHeader& header, std::string state_bytes) {
  std::lock_guard<std::mutex> lock(m_);
  queue_.push_back({id, address, header, std::move(state_bytes)});
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
  c->send({MsgType::cloud_register, 0,
           encode(PeerRegistration{o_.edge_id, o_.edge_address, hmac_sha256_hex(o_.secret, h.nonce + "edge:" + o_.edge_id)})},
          Seconds(5));
  auto ack = c->receive(Seconds(5));  // a heartbeat: accepted; an error frame says why not
  if (!ack) throw ConnectionClosed("the cloud did not answer the registration within 5 s");
  if (ack->type == MsgType::error) throw ConnectionClosed("the cloud refused the registration: " + decode_error(ack->payload));
  if (ack->type != MsgType::heartbeat) throw ProtocolError(std::string("expected the cloud's acknowledgement, got ") + to_string(ack->type));
  c->set_max_payload(kDefaultMaxPayload);
  c->set_shaping(o_.shaping);
  return c;
}

void CloudLink::sender_loop() {
  std::unique_lock<std::mutex> lock(m_);
  while (!closing_) {
    if (queue_.empty()) {
      cv_.wait_for(lock, Seconds(0.2));
      continue;
    }
    Job job = std::move(queue_.front());
    queue_.pop_front();
    std::shared_ptr<Connection> c = conn_;
    if (!c || conn_address_ != job.address) {
      if (job.address.empty() || steady_s() < retry_at_) {
        lock.unlock();
        fail(job.id, job.address.empty() ? "cloud " + o_.cloud_id + " has no known address yet"
                                         : "cloud " + o_.cloud_id + " cannot be reached: " + last_error_);
        lock.lock();
        continue;
      }
      std::shared_ptr<Connection> old = conn_;
      lock.unlock();
      if (old) lose(old, "cloud " + o_.cloud_id + " moved to " + job.address);
      try {
        c = connect(job.address);
        log_("connected to cloud " + o_.cloud_id + " at " + job.address);
      } catch (const std::exception& e) {
        lock.lock();
        last_error_ = e.what();
        retry_at_ = steady_s() + o_.retry_s;
        lock.unlock();
        log_("cloud " + o_.cloud_id + " at " + job.address + " cannot be reached: " + e.what());
        fail(job.id, "cloud " + o_.cloud_id + " cannot be reached: " + e.what());
        lock.lock();
        continue;
      }
      lock.lock();
      if (reader_.joinable()) {  // the last connection's reader has ended (lose() closed it)
        lock.unlock();
        reader_.join();
        lock.lock();
      }
      conn_ = c;
      conn_address_ = job.address;
      reader_ = std::thread([this, c] { reader_loop(c); });
    }
    sent_[job.id] = true;  // before sending: its result may overtake this thread
    lock.unlock();
    std::string error;
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
