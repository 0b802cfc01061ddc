// coinfer-rt: the real runtime (`coinfer serve`, `coinfer device`, `coinfer testbed` run it), kept in
// its own program so that the simulator's `coinfer` does not load Torch.
#include <CLI/CLI.hpp>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <map>

#include <nlohmann/json.hpp>

#include "cli/commands.hpp"
#include "core/input_error.hpp"
#include "core/execution_time.hpp"
#include "core/device_plan.hpp"
#include "core/log.hpp"
#include "core/text_util.hpp"
#include "hw/auth.hpp"
#include "hw/compute_threads.hpp"
#include "hw/cpu_cap.hpp"
#include "hw/device_runtime.hpp"
#include "hw/edge_server.hpp"
#include "hw/runtime_version.hpp"
#include "hw/testbed.hpp"
#include "io/lut_repository.hpp"
#include "io/data_root.hpp"
#include "io/model_spec_loader.hpp"
#include "io/scenario_loader.hpp"
#include "plumbing/child_process.hpp"
#include "sched/scheduler_factory.hpp"
#include "cli/scenario_args.hpp"

namespace {

std::atomic<bool> g_stop{false};
void on_signal(int) { g_stop = true; }

void install_signal_handlers() {
  struct sigaction sa {};
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
  signal(SIGPIPE, SIG_IGN);
}

// --processor-device NAME=DEVICE (repeatable) as a map; exit 2 naming the option for another form or a
// processor named twice. Whether NAME is a processor of the board and DEVICE usable here is the
// device runtime's to say (it knows the board).
std::map<std::string, std::string> processor_device_map(const std::vector<std::string>& given) {
  std::map<std::string, std::string> out;
  for (const std::string& kv : given) {
    const auto eq = kv.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == kv.size())
      throw coinfer::InputError(coinfer::SourceLocation{"--processor-device", 0, 0}, "--processor-device",
                                "expected NAME=DEVICE (e.g. gpu=cuda:0, gpu=cpu), got '" + kv + "'");
    if (!out.emplace(kv.substr(0, eq), kv.substr(eq + 1)).second)
      throw coinfer::InputError(coinfer::SourceLocation{"--processor-device", 0, 0}, "--processor-device",
                                "processor '" + kv.substr(0, eq) + "' is given twice");
  }
  return out;
}

std::string fixed3(double v) {
  char b[64];
  std::snprintf(b, sizeof b, "%.3f", v);
  return b;
}

// `check --plan`: per device, its strategy's segments and what each costs one request alone (expected
// LUT times, core/device_plan.hpp segment_seconds: copies between processors included), and their sum:
// the device's time per request as the simulator gives it with nothing else running. A plan that
// cannot run says why; a device whose LUTs lack a processor's table says which.
void print_device_plans(const coinfer::Scenario& s, const coinfer::ModelCatalog& catalog, const coinfer::LutSet& luts, std::ostream& out) {
  using namespace coinfer;
  for (const DeviceSpec& d : s.devices) {
    const ModelSpec model = catalog.instantiate(d.model, d.dataset);
    const DeviceHardware hw = d.hardware ? *d.hardware : single_processor_hardware(d.default_processor(), 0);
    const DevicePlan plan = make_device_plan(d.strategy, model.num_stages(), hw, d.id);
    out << "plan " << d.id << ": " << d.strategy.to_string();
    if (!plan.invalid.empty()) {
      out << ": cannot run: " << plan.invalid << "\n";
      continue;
    }
    if (plan.segments.empty()) {
      out << ": nothing on the device\n";
      continue;
    }
    const LutKey own = d.lut_key(d.model);
    const std::vector<const LutTable*> tables = processor_tables(luts, own, luts.contains(own) ? &luts.table(own) : nullptr, hw);
    const int split = plan.segments.back().end;
    double total = 0;
    std::string missing;
    for (size_t j = 0; j < plan.segments.size(); ++j) {
      const DeviceSegment& seg = plan.segments[j];
      for (int p : {seg.proc, seg.with})
        if (p >= 0 && !tables[static_cast<size_t>(p)]) missing = hw.processors[static_cast<size_t>(p)];
      if (!missing.empty()) break;
      const double t = segment_seconds(plan, j, split, model, hw, tables, lut_mean_time(), -1);
      total += t;
      out << (j ? ", " : ": ") << (hw.processors[static_cast<size_t>(seg.proc)].empty() ? "processor" : hw.processors[static_cast<size_t>(seg.proc)])
          << (seg.with >= 0 ? "*" + format_double(seg.share) + "+" + hw.processors[static_cast<size_t>(seg.with)] : "") << " [" << seg.begin << ","
          << seg.end << ") " << fixed3(t * 1e3) << " ms";
    }
    if (!missing.empty())
      out << ": no LUT of processor '" << missing << "' of " << d.type << "\n";
    else
      out << " = " << fixed3(total * 1e3) << " ms per request alone\n";
  }
}

std::string secret_or_input_error(const std::string& file) {
  try {
    return coinfer::hw::load_secret(file);
  } catch (const std::runtime_error& e) {
    throw coinfer::InputError(coinfer::SourceLocation{file.empty() ? "COINFER_SECRET" : file, 0, 0}, "--secret-file", e.what());
  }
}

// `serve`: an edge server for a scenario.
void add_serve(CLI::App& app, int& exit_code) {
  using namespace coinfer;
  // serve
  auto sv = std::make_shared<hw::ServeOptions>();
  auto sv_scenario = std::make_shared<std::string>();
  auto sv_sets = std::make_shared<std::vector<std::string>>();
  auto sv_secret = std::make_shared<std::string>();
  CLI::App* serve = app.add_subcommand("serve", "run an edge server for a scenario (until Ctrl-C or SIGTERM)");
  cli::add_scenario_args(*serve, *sv_scenario, *sv_sets);
  serve->add_option("--server", sv->server_id, "which of the scenario's servers this is (default: the first)");
  serve->add_option("--bind", sv->bind, "address to listen on (default 0.0.0.0)");
  serve->add_option("--port", sv->port, "TCP port (default 7070; 0 = any free port)");
  serve->add_option("--port-file", sv->port_file, "write the port here once listening");
  serve->add_option("--secret-file", *sv_secret, "file holding the shared secret (default: $COINFER_SECRET)");
  serve->add_option("--epoch", sv->epoch_unix_s, "the run's time zero in Unix seconds (default: now)");
  serve->add_option("--decisions-out", sv->decisions_out, "write every scheduling decision here (JSON lines)");
  serve->add_option("--threads", sv->threads_per_worker, "LibTorch threads per worker (default 1)");
  serve->add_option("--heartbeat", sv->heartbeat_s, "heartbeat interval in seconds (default 1)");
  serve->add_flag("--shape", sv->shape, "pace each device's downlink as its scenario link (loopback testbeds)");
  serve->add_flag("--shape-latency", sv->shape_latency, "add each device's link latency to its downlink (testbeds without tc netem)");
  serve->add_option("--coordinator", sv->coordinator,
                    "several servers: where this server reaches the scenario's first server, which holds the scheduler (host:port)");
  serve->add_option("--advertise", sv->advertise,
                    "several servers: where devices reach this server (host:port; default --bind and the port listened on)");
  serve->add_flag("--coordinate-only", sv->coordinate_only,
                  "several servers: only hold the scheduler (every server, the first too, runs as a peer with --coordinator); "
                  "no server failure stops it");
  serve->add_flag("--recovering", sv->recovering,
                  "started again after a fail event (coinfer testbed does this): append to --decisions-out, first decision 'recover:SERVER'");
  serve->callback([=, &exit_code] {
    exit_code = cli::guarded([&] {
      sv->secret = secret_or_input_error(*sv_secret);
      Scenario s = load_scenario(*sv_scenario, *sv_sets);
      hw::EdgeServer server(s, ModelCatalog::load(data_path("models")), load_scenario_luts(s), *sv);
      server.run(g_stop);
      return 0;
    });
  });
}

// `device`: one device of a scenario against its edge server.
void add_device(CLI::App& app, int& exit_code) {
  using namespace coinfer;
  // device
  auto dv = std::make_shared<hw::DeviceOptions>();
  auto dv_scenario = std::make_shared<std::string>();
  auto dv_sets = std::make_shared<std::vector<std::string>>();
  auto dv_secret = std::make_shared<std::string>();
  auto dv_cap = std::make_shared<double>(0);
  CLI::App* device = app.add_subcommand("device", "run one device of a scenario against its edge server");
  cli::add_scenario_args(*device, *dv_scenario, *dv_sets);
  device->add_option("--id", dv->device_id, "the scenario's device this process is")->required();
  device->add_option("--host", dv->host, "edge server address (default 127.0.0.1)");
  device->add_option("--port", dv->port, "edge server port (default 7070)");
  device->add_option("--coordinator", dv->coordinator,
                     "several servers: the scenario's first server (host:port), asked where to register when its own cannot be reached");
  device->add_option("--secret-file", *dv_secret, "file holding the shared secret (default: $COINFER_SECRET)");
  device->add_option("--epoch", dv->epoch_unix_s, "the run's time zero in Unix seconds (default: now)");
  device->add_option("--records", dv->records_out, "journal of this device's requests (JSON lines)")->required();
  device->add_flag("--records-stdout", dv->records_stdout, "also write every journal line to standard output");
  device->add_option("--threads", dv->threads, "LibTorch threads (default 1)");
  device->add_option("--input", dv->input_file, "dataset file to take inputs from (models/README.md layouts)");
  device->add_option("--cpu-cap", *dv_cap, "cap this process at this many cores (cgroup), emulating a slower device");
  auto dv_cap_scope = std::make_shared<std::string>("process");
  device
      ->add_option("--cpu-cap-scope", *dv_cap_scope,
                   "what --cpu-cap caps: process (all threads, default) or work (compute and upload threads only; cgroup v1)")
      ->check(CLI::IsMember({"process", "work"}));
  device->add_option("--work-threads-file", dv->work_threads_file,
                     "write the compute and upload threads' kernel ids here (a testbed caps them from outside)");
  device->add_option("--heartbeat", dv->heartbeat_s, "heartbeat interval in seconds (default 1)");
  device->add_option("--power-command", dv->power_command,
                     "a command printing this board's power draw in watts, one reading per line (energy measured; hw/README.md)");
  device->add_option("--clock-skew", dv->clock_skew_s, "testing: set this device's clock off by S seconds (the clock probes measure it)")
      ->group("");  // hidden
  auto dv_processors = std::make_shared<std::vector<std::string>>();
  device->add_option("--processor-device", *dv_processors,
                     "NAME=DEVICE: the LibTorch device computing the board's processor NAME here: cpu, cuda, cuda:N or none (repeatable; "
                     "default: the device's default processor on the CPU, a gpu-kind processor on cuda:0 where LibTorch sees a GPU; "
                     "hw/README.md \"Stages on several processors\")");
  device->add_flag("--shape", dv->shape, "pace the uplink as the scenario link (loopback testbeds)");
  device->add_flag("--shape-latency", dv->shape_latency, "add the link latency to the uplink (testbeds without tc netem)");
  device->callback([=, &exit_code] {
    exit_code = cli::guarded([&] {
      dv->secret = secret_or_input_error(*dv_secret);
      dv->processor_devices = processor_device_map(*dv_processors);
      Scenario s = load_scenario(*dv_scenario, *dv_sets);
      std::unique_ptr<hw::CpuCap> cap;
      if (*dv_cap > 0 && *dv_cap_scope == "process") cap = hw::CpuCap::apply(*dv_cap);
      if (*dv_cap > 0 && *dv_cap_scope == "work") dv->work_cpu_cores = *dv_cap;
      hw::DeviceRuntime rt(s, ModelCatalog::load(data_path("models")), load_scenario_luts(s), *dv);
      try {
        const long long failed = rt.run(g_stop);
        log::info("device", dv->device_id + ": done, " + std::to_string(failed) + " failed requests");
      } catch (const hw::RegistrationRefused& e) {
        std::cerr << "error: " << e.what() << "\n";
        return 2;
      }
      return 0;
    });
  });
}

// `testbed`: a scenario on an emulated testbed, or on real hosts over SSH.
void add_testbed(CLI::App& app, int& exit_code) {
  using namespace coinfer;
  // testbed
  auto tb = std::make_shared<hw::TestbedOptions>();
  auto tb_cleanup = std::make_shared<bool>(false);
  CLI::App* testbed =
      app.add_subcommand("testbed", "run a scenario on an emulated testbed (network namespaces + tc), or on real hosts over SSH (--inventory)");
  cli::add_scenario_args(*testbed, tb->scenario, tb->sets, "scenario YAML file", false);
  testbed->add_option("--out", tb->out, "output folder (default: results/<scenario name>-testbed)");
  testbed->add_flag("--loopback", tb->loopback, "skip network namespaces: loopback with shaping inside the middleware");
  testbed->add_option("--device-cpu", tb->device_cpu_cores, "cap each device at this many cores (cgroup)");
  testbed
      ->add_option("--device-cpu-scope", tb->device_cpu_scope,
                   "what --device-cpu caps: work (the compute and upload threads, as the LUT was profiled; default where cgroup v1 "
                   "allows) or process (every thread of the device process)")
      ->check(CLI::IsMember({"work", "process"}));
  testbed
      ->add_option("--device-memory", tb->device_memory,
                   "the kernel's memory limit on each device process whose memory the scenario states (a cgroup): auto (default: the "
                   "board's memory plus the process's footprint before its first request, where cgroups allow), exact (the board's "
                   "memory for the whole process) or off")
      ->check(CLI::IsMember({"auto", "exact", "off"}));
  testbed->add_option("--threads", tb->threads, "LibTorch threads per device and per server worker (default 1)");
  testbed->add_option("--startup", tb->startup_s, "seconds given to the processes to start before time zero (default 4)");
  testbed
      ->add_option("--clock-tolerance", tb->clock_tolerance_s,
                   "warn when a board's clock offset is known less well than this many seconds (default 0.005)")
      ->check(CLI::PositiveNumber);
  auto tb_meters = std::make_shared<std::vector<std::string>>();
  testbed->add_option("--device-power-command", *tb_meters, "testing: ID=COMMAND gives device ID a power meter (repeatable)")->group("");
  auto tb_skews = std::make_shared<std::vector<std::string>>();
  testbed->add_option("--device-clock-skew", *tb_skews, "testing: ID=S sets device ID's clock off by S seconds (repeatable)")->group("");
  testbed->add_option("--inventory", tb->inventory,
                      "run on real hosts over SSH as this inventory file says (hw/README.md \"A real testbed over SSH\")");
  testbed->add_option(
      "--device-rt", tb->device_rt_exe,
      "the coinfer-rt the devices run (default: this one), e.g. build-arm64/coinfer-rt (hw/README.md \"An arm64 board under emulation\")");
  auto tb_launcher = std::make_shared<std::string>();
  testbed->add_option("--device-launcher", *tb_launcher,
                      "words put before the devices' program, e.g. \"bash scripts/board.sh run\" (inside the arm64 root, emulated)");
  testbed->add_option("--processor-device", tb->processor_devices,
                      "NAME=DEVICE given to every device: the LibTorch device computing its board's processor NAME (coinfer-rt device --help)");
  testbed->add_flag("--keep-remote", tb->keep_remote, "with --inventory: keep each host's run folder (default: removed at the end)");
  testbed->add_flag("--cleanup", *tb_cleanup, "stop the processes and remove the namespaces left by a killed testbed, then exit");
  testbed->callback([=, &exit_code] {
    exit_code = cli::guarded([&] {
      if (*tb_cleanup) {
        // First the processes a killed testbed left (servers and devices whose testbed is gone), then
        // the namespaces (hw/netns_hosts.cpp stops what still runs inside them too).
        const auto stopped = stop_orphaned_processes("coinfer-rt", 3.0);
        for (pid_t pid : stopped) std::cout << "stopped process " << pid << " (coinfer-rt of a testbed that is gone)\n";
        const int n = hw::cleanup_stray_namespaces();
        std::cout << "stopped " << stopped.size() << " stray processes, removed " << n << " stray namespaces\n";
        return 0;
      }
      tb->quiet = cli::quiet("testbed");
      for (const auto& kv : *tb_skews) {
        const auto eq = kv.find('=');
        char* end = nullptr;
        const double v = eq == std::string::npos ? 0 : std::strtod(kv.c_str() + eq + 1, &end);
        if (eq == std::string::npos || end == kv.c_str() + eq + 1 || *end != '\0' || !std::isfinite(v))
          throw InputError(SourceLocation{"--device-clock-skew", 0, 0}, "--device-clock-skew", "expected ID=SECONDS, got '" + kv + "'");
        tb->device_clock_skew_s[kv.substr(0, eq)] = v;
      }
      for (const auto& kv : *tb_meters) {
        const auto eq = kv.find('=');
        if (eq == std::string::npos || eq + 1 == kv.size())
          throw InputError(SourceLocation{"--device-power-command", 0, 0}, "--device-power-command", "expected ID=COMMAND, got '" + kv + "'");
        tb->device_power_command[kv.substr(0, eq)] = kv.substr(eq + 1);
      }
      (void)processor_device_map(tb->processor_devices);  // the form checked here; each device checks its board's names
      if (tb->scenario.empty()) throw InputError(SourceLocation{"testbed", 0, 0}, "scenario", "a scenario file is required");
      if (tb->out.empty()) tb->out = "results/" + load_scenario(tb->scenario, tb->sets).name + "-testbed";
      cli::check_output_folder(tb->out, "--out");
      tb->rt_exe = std::filesystem::canonical("/proc/self/exe").string();
      tb->device_launcher.clear();
      for (const std::string& w : split(*tb_launcher, ' '))
        if (!w.empty()) tb->device_launcher.push_back(w);
      if (!tb->inventory.empty() && (!tb->device_rt_exe.empty() || !tb->device_launcher.empty()))
        throw InputError(SourceLocation{"--device-rt", 0, 0}, "--device-rt",
                         "with --inventory each host's program is its inventory's `coinfer:` line; --device-rt and --device-launcher are for the "
                         "emulated testbed");
      if (!tb->device_rt_exe.empty()) {
        if (!std::filesystem::exists(tb->device_rt_exe))
          throw InputError(SourceLocation{"--device-rt", 0, 0}, "--device-rt", "no such program: " + tb->device_rt_exe);
        tb->device_rt_exe = std::filesystem::absolute(tb->device_rt_exe).lexically_normal().string();
      }
      return hw::run_testbed(*tb, g_stop);
    });
  });
}

// `version`: what a testbed over SSH checks on every host before it starts anything.
void add_version(CLI::App& app) {
  using namespace coinfer;
  // version: what a testbed over SSH checks on every host before it starts anything.
  auto vs_json = std::make_shared<bool>(false);
  CLI::App* version = app.add_subcommand("version", "print this program's version, wire protocol and architecture");
  version->add_flag("--json", *vs_json, "as one JSON object (coinfer, protocol, built_for, machine, unix_time_s)");
  version->callback([=] {
    const nlohmann::json v = hw::runtime_version();
    if (*vs_json)
      std::cout << v.dump() << "\n";
    else
      std::cout << "coinfer " << v["coinfer"].get<std::string>() << " (wire protocol " << v["protocol"].get<int>() << ", built for "
                << v["built_for"].get<std::string>() << ", running on " << v["machine"].get<std::string>() << ")\n";
  });
}

// `check`: the scenario, its models and LUTs, and the secret, as serve and device would load them.
void add_check(CLI::App& app, int& exit_code) {
  using namespace coinfer;
  // check: the scenario, its models and LUTs, and the secret, as serve and device would load them.
  auto ck_scenario = std::make_shared<std::string>();
  auto ck_sets = std::make_shared<std::vector<std::string>>();
  auto ck_secret = std::make_shared<std::string>();
  CLI::App* check = app.add_subcommand("check", "check that a scenario runs here (models, LUTs, secret) without starting anything");
  cli::add_scenario_args(*check, *ck_scenario, *ck_sets);
  check->add_option("--secret-file", *ck_secret, "the shared secret's file: readable, not readable by group or others");
  auto ck_plan = std::make_shared<bool>(false);
  check->add_flag("--plan", *ck_plan,
                  "also print each device's stages as segments on its processors with their times from the LUTs (core/device_plan.hpp: "
                  "what the simulator gives one request alone on the device, copies included)");
  check->callback([=, &exit_code] {
    exit_code = cli::guarded([&] {
      Scenario s = load_scenario(*ck_scenario, *ck_sets);
      const ModelCatalog catalog = ModelCatalog::load(data_path("models"));
      const LutSet luts = load_scenario_luts(s);
      check_scenario_against(s, catalog, luts, scheduler_traits(s.scheduler.name));
      if (!ck_secret->empty()) {
        hw::check_secret_file_permissions(*ck_secret);
        secret_or_input_error(*ck_secret);
      }
      std::cout << "ok: " << s.file << " (" << s.devices.size() << " devices) runs here; models from " << data_path("models") << "\n";
      if (*ck_plan) print_device_plans(s, catalog, luts, std::cout);
      return 0;
    });
  });
}

}  // namespace

int main(int argc, char** argv) {
  using namespace coinfer;
  CLI::App app{"coinfer-rt: the real co-inference runtime (edge server, device, emulated testbed)"};
  app.name("coinfer");  // usage lines read "coinfer serve ...", the way users call it
  app.require_subcommand(1);
  int exit_code = 0;
  install_signal_handlers();
  // Started by a testbed (ChildSpec::die_with_parent): stop as at SIGTERM when it is gone
  // (kill -9 of `coinfer testbed` left its server running).
  watch_parent_from_environment([] { g_stop = true; });
  coinfer::hw::keep_tensor_memory();  // large LibTorch temporaries reuse memory instead of page-faulting

  add_serve(app, exit_code);
  add_device(app, exit_code);
  add_testbed(app, exit_code);
  add_version(app);
  add_check(app, exit_code);

  std::string command_line;
  if (const int rc = cli::parse_command_line(app, argc, argv, command_line); rc >= 0) return rc;
  return exit_code;
}
