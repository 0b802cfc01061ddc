#include "sched/external_scheduler.hpp"

#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "core/input_error.hpp"
#include "core/log.hpp"
#include "core/text_util.hpp"
#include "plumbing/child_process.hpp"
#include "sched/state_json.hpp"

namespace coinfer {

namespace {

using json = nlohmann::json;
using Clock = std::chrono::steady_clock;

constexpr int kProtocol = 1;
constexpr size_t kMaxLineBytes = 64u << 20;  // one answer; a longer one is garbage

class ExternalScheduler : public Scheduler {
 public:
  ExternalScheduler(const Scenario& s, const std::map<std::string, int>& stages) {
    const auto& params = s.scheduler.params;
    auto it = params.find("command");
    if (it == params.end())
      throw InputError(s.scheduler.where, "scheduler.command", "scheduler external needs a command (e.g. command: \"python3 my_scheduler.py\")");
    command_ = it->second;
    const std::vector<std::string> argv = split_command_line(command_, s.scheduler.where, "scheduler.command");
    const auto seconds = [&](const char* key, double& into) {
      if (auto t = params.find(key); t != params.end()) {
        char* end = nullptr;
        into = std::strtod(t->second.c_str(), &end);
        if (end != t->second.c_str() + t->second.size() || !(into > 0) || into > 3600)
          throw InputError(s.scheduler.where, std::string("scheduler.") + key,
                           "'" + printable(t->second, 40) + "' must be a number of seconds in (0, 3600]");
      }
    };
    seconds("timeout_s", timeout_s_);
    seconds("startup_s", startup_s_);
    const std::string objective = params.count("objective") ? params.at("objective") : "throughput";

    ChildSpec spec;
    spec.argv = argv;
    spec.connect_stdio = true;
    if (!s.file.empty()) spec.cwd = std::filesystem::absolute(s.file).parent_path().string();
    try {
      child_ = Child::start(spec);
    } catch (const std::exception& e) {
      throw InputError(s.scheduler.where, "scheduler.command", e.what());
    }
    log::debug("sched", "external scheduler started: " + join(argv, " ") + " (pid " + std::to_string(child_.pid()) + ")");

    json hello = {{"type", "hello"}, {"protocol", kProtocol}, {"scenario", s.name}, {"objective", objective}};
    hello["devices"] = json::array();
    for (const auto& d : s.devices)
      hello["devices"].push_back({{"id", d.id},
                                  {"type", d.type},
                                  {"model", d.model},
                                  {"dataset", d.dataset},
                                  {"stages", stages.count(d.model + "/" + d.dataset) ? stages.at(d.model + "/" + d.dataset) : 0},
                                  {"server", d.server}});
    hello["servers"] = json::array();
    for (const auto& sv : s.servers) hello["servers"].push_back(sv.id);
    try {
      // Starting an interpreter and its imports may take longer than a decision may (and a loaded
      // machine slows it further): the hello has its own allowance.
      const double startup_s = std::max(timeout_s_, startup_s_);
      const char* key = startup_s_ >= timeout_s_ ? "scheduler.startup_s" : "scheduler.timeout_s";
      send(hello.dump(), startup_s, key);
      const json answer = parse(receive(startup_s, key), "{\"type\":\"ready\"}");
      if (answer.value("type", "") != "ready") fail("answered the hello with " + printable(answer.dump(), 200) + ", expected {\"type\":\"ready\"}");
      if (answer.contains("name") && answer["name"].is_string()) name_ = answer["name"].get<std::string>();
    } catch (const SchedulerFailure& e) {
      throw InputError(s.scheduler.where, "scheduler.command", e.what());
    }
  }

  ~ExternalScheduler() override {
    if (!child_.running()) return;
    child_.close_channel();  // end of input: the scheduler should exit
    if (!child_.wait_for(2)) child_.stop(1);
  }

  std::string name() const override { return "external"; }

  Scheme decide(const SystemState& state) override {
    if (!failed_.empty()) throw SchedulerFailure(failed_);
    const long long id = next_id_++;
    json request = {{"type", "decide"}, {"id", id}};
    request["state"] = json::parse(state_to_json(state));
    send(request.dump());
    const json answer = parse(receive(), "{\"type\":\"scheme\",\"id\":" + std::to_string(id) + ",\"scheme\":{...}}");
    const std::string type = answer.is_object() ? answer.value("type", "") : "";
    if (type == "error" && answer.contains("message")) fail("reported an error: " + printable(answer["message"].dump(), 400));
    if (type != "scheme" || !answer.contains("id") || answer["id"] != id || !answer.contains("scheme"))
      fail("answered " + printable(answer.dump(), 200) + " to decision " + std::to_string(id) +
           ", expected {\"type\":\"scheme\",\"id\":" + std::to_string(id) + ",\"scheme\":{...}}");
    try {
      return scheme_from_json(answer["scheme"].dump());
    } catch (const InputError& e) {
      fail(std::string("answered an invalid scheme: ") + e.what());
    }
  }

 private:
  [[noreturn]] void fail(const std::string& why) {
    child_.close_channel();
    if (child_.running()) child_.stop(1);
    failed_ = "external scheduler '" + printable(command_, 200) + "' " + why;
    throw SchedulerFailure(failed_);
  }

  std::string exit_text() {
    int status = -1;
    if (child_.wait_for(1, &status)) return "exited (" + describe_exit_status(status) + ")";
    return "closed its output";
  }

  // Sends `line`, waiting at most limit_s for the process to take it (the decisions' timeout_s unless
  // given; `key` names the limit in the failure).
  void send(const std::string& line, double limit_s = 0, const char* key = "scheduler.timeout_s") {
    if (limit_s <= 0) limit_s = timeout_s_;
    const std::string data = line + "\n";
    size_t done = 0;
    const auto deadline = Clock::now() + std::chrono::duration<double>(limit_s);
    while (done < data.size()) {
      pollfd p{child_.channel(), POLLOUT, 0};
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
      if (left <= 0) fail("did not read its input within " + format_double(limit_s) + " s (" + key + ")");
      if (::poll(&p, 1, static_cast<int>(std::min<long long>(left, 1000))) <= 0) continue;
      const ssize_t n = ::send(child_.channel(), data.data() + done, data.size() - done, MSG_NOSIGNAL);
      if (n > 0)
        done += static_cast<size_t>(n);
      else if (n < 0 && errno != EINTR && errno != EAGAIN)
        fail(exit_text() + " before reading its input");
    }
  }

  // The next line the process writes, waiting at most limit_s (the decisions' timeout_s unless given;
  // `key` names the limit in the failure).
  std::string receive(double limit_s = 0, const char* key = "scheduler.timeout_s") {
    if (limit_s <= 0) limit_s = timeout_s_;
    const auto deadline = Clock::now() + std::chrono::duration<double>(limit_s);
    char buf[65536];
    for (;;) {
      const size_t nl = buffer_.find('\n');
      if (nl != std::string::npos) {
        std::string line = buffer_.substr(0, nl);
        buffer_.erase(0, nl + 1);
        if (!line.empty() && line.back() == '\r') line.pop_back();
        if (trim(line).empty()) continue;  // blank lines are allowed
        return line;
      }
      if (buffer_.size() > kMaxLineBytes) fail("answered a line longer than 64 MiB");
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
      if (left <= 0) fail("did not answer within " + format_double(limit_s) + " s (" + key + ")");
      pollfd p{child_.channel(), POLLIN, 0};
      if (::poll(&p, 1, static_cast<int>(std::min<long long>(left, 1000))) <= 0) continue;
      const ssize_t n = ::read(child_.channel(), buf, sizeof buf);
      if (n > 0)
        buffer_.append(buf, static_cast<size_t>(n));
      else if (n == 0 || (errno != EINTR && errno != EAGAIN))
        fail(exit_text() + " instead of answering" + (buffer_.empty() ? "" : " (its last output, unterminated: " + printable(buffer_, 200) + ")"));
    }
  }

  json parse(const std::string& line, const std::string& expected) {
    try {
      return json::parse(line);
    } catch (const std::exception&) {
      fail("answered something that is not JSON: '" + printable(line, 200) + "' (expected " + expected +
           " on one line; print nothing else on standard output)");
    }
  }

  std::string command_, name_, failed_, buffer_;
  double timeout_s_ = 10;
  // Seconds the process has to start and answer the hello, at least (timeout_s when larger): an
  // interpreter and its imports may take longer than a decision may.
  double startup_s_ = 30;
  Child child_;
  long long next_id_ = 1;
};

}  // namespace

std::unique_ptr<Scheduler> make_external_scheduler(const Scenario& scenario, const std::map<std::string, int>& stages) {
  return std::make_unique<ExternalScheduler>(scenario, stages);
}

}  // namespace coinfer
