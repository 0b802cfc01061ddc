#pragma once
// A device-loop engine for tests (core/device_loop.hpp) that only writes down what the loop asks of
// it; shared by tests/unit/test_device_loop.cpp and test_device_processors.cpp.
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "core/device_loop.hpp"

namespace coinfer::test {

constexpr double kRecorderBw = 125000;  // 1 Mbit/s

// An engine that only writes down what the loop asks of it.
struct Recorder : DeviceActions {
  virtual ~Recorder() = default;
  std::map<std::int64_t, DeviceRequest> reqs;
  std::vector<std::string> log;
  std::map<std::int64_t, RequestRecord> done;
  std::int64_t next = 0;
  long long capacity = 1 << 20;

  DeviceRequest& new_request(double now_s) override {
    DeviceRequest& r = reqs[next];
    r.rec.id = next++;
    r.rec.t_created = now_s;
    std::ostringstream o;
    o << "new " << r.rec.id << "@" << now_s;
    log.push_back(o.str());
    return r;
  }
  bool may_create() const override { return next < capacity; }
  double link_bytes_per_s(double) override { return kRecorderBw; }
  void start_compute(DeviceRequest& r) override {
    log.push_back("compute " + std::to_string(r.rec.id) + " [0," + std::to_string(r.device_split) + ")");
  }
  void start_upload(DeviceRequest& r) override { log.push_back("upload " + std::to_string(r.rec.id) + " @" + std::to_string(r.device_split)); }
  void start_help(std::int64_t task) override { log.push_back("help " + std::to_string(task)); }
  void finished(DeviceRequest& r) override {
    log.push_back("finished " + std::to_string(r.rec.id) + (r.rec.status == RequestRecord::Status::ok ? " ok" : " failed: " + r.rec.failure));
    done[r.rec.id] = r.rec;
    reqs.erase(r.rec.id);
  }
  std::vector<std::string> take() {
    std::vector<std::string> out;
    out.swap(log);
    return out;
  }
};

}  // namespace coinfer::test
