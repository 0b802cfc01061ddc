#pragma once
// The real device runtime (`coinfer device`): connects to its edge server and registers (answering the
// challenge with the shared secret), applies the strategy the server's scheduler sends (local,
// offload, pp(k) with pipelining, data_parallel), creates inputs as the scenario's workload says
// (closed loop, Poisson, trace; from the dataset generators or a dataset file), runs its stages in
// LibTorch, uploads the intermediate state, and records every request with the simulator's
// timestamps. It reconnects when the connection drops (requests then on the server are recorded
// failed), serves forwarded work when the scheduler makes it a helper, and sends heartbeats carrying
// its status and link bandwidth.
//
// Records: a journal of JSON lines (`records_out`), one "created" line when a request is created and
// one "done" line with the whole RequestRecord when it completes or fails, flushed as they happen, so
// a device killed mid-run leaves behind which of its requests never finished (hw/README.md).
#include <atomic>
#include <functional>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>

#include "core/lut.hpp"
#include "core/scenario.hpp"
#include "io/model_spec_loader.hpp"

namespace coinfer::hw {

// The server refused the registration (wrong secret, unknown device, model not served): retrying
// cannot help; the device stops.
struct RegistrationRefused : std::runtime_error {
  using std::runtime_error::runtime_error;
};
// The server answered the registration with a redirect (several servers): the device belongs to
// `server`, listening at `address`, now.
struct RegistrationRedirected : std::runtime_error {
  RegistrationRedirected(std::string s, std::string a)
      : std::runtime_error("redirected to " + s + " at " + a), server(std::move(s)), address(std::move(a)) {}
  std::string server, address;
};

struct DeviceOptions {
  std::string device_id;           // the scenario's device this process is
  std::string host = "127.0.0.1";  // the edge server
  int port = 7070;
  // Several servers (hw/README.md "Several edge servers"): the scenario's first server ("host:port"),
  // which knows where every device belongs now; the device asks it when its own server cannot be
  // reached (it is redirected to its server now). "" = ask none.
  std::string coordinator;
  std::string secret;
  double epoch_unix_s = 0;      // the run's time zero (Unix s); 0 = when the device starts
  std::string records_out;      // journal file (JSON lines); required
  bool records_stdout = false;  // every journal line also on stdout (a testbed over SSH streams it)
  int threads = 1;              // LibTorch threads
  bool shape = false;           // loopback fallback: pace the uplink as the scenario's link
  bool shape_latency = false;   // add the one-way link latency to the uplink (no tc netem)
  std::string input_file;       // optional dataset file (io/dataset_h5.hpp layouts)
  double heartbeat_s = 1.0;
  // Testing: seconds added to every reading of this device's clock (a board whose clock is off). The
  // clock probes (hw/clock_sync.hpp) measure it, and the journal merge takes it out.
  double clock_skew_s = 0;
  // A power meter: a command printing the board's draw in watts, one reading per line (the first number
  // on each line; e.g. a script around tegrastats or an INA219), started with the device and stopped at
  // its end. Its readings go into the journal; the merge integrates them over the measurement window.
  // "" = no meter (energy is then not measured: NaN).
  std::string power_command;
  // Emulating a slower device on the threads that do its work (compute, serialisation, compression)
  // only: 0 = no such cap (the caller may cap the whole process instead). hw/cpu_cap.hpp for_threads.
  double work_cpu_cores = 0;
  // Where to write the kernel thread ids of the work threads (one per line, when each starts), for a
  // testbed that caps them from outside the device's network namespace (no cgroup file system there).
  std::string work_threads_file;
  // Which LibTorch device computes each of the board's processors here (hw/README.md "Stages on
  // several processors"): processor name -> "cpu", "cuda", "cuda:N" or "none". Unnamed processors:
  // the device's default processor on the CPU; a processor of kind gpu on cuda:0 where this LibTorch
  // sees a GPU; any other none (a segment placed there fails, naming it). Each mapped processor has its
  // own compute thread.
  std::map<std::string, std::string> processor_devices;
  std::function<void(const std::string&)> log;
};

class DeviceRuntime {
 public:
  // Throws InputError for an unknown device id or an unusable input file.
  DeviceRuntime(Scenario scenario, ModelCatalog catalog, LutSet luts, DeviceOptions options);
  ~DeviceRuntime();
  // Runs from the device's join time to its leave time (or the end of arrivals plus the drain), or
  // until `stop`. Returns the number of failed requests.
  long long run(const std::atomic<bool>& stop);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace coinfer::hw
