#include "hw/device_runtime.hpp"

#include <poll.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdlib>
#include <thread>

#include "core/bandwidth_schedule.hpp"
#include "core/data_parallel_router.hpp"
#include "core/input_error.hpp"
#include "core/log.hpp"
#include "core/mobility.hpp"
#include "core/text_util.hpp"
#include "hw/device_context.hpp"
#include "hw/device_server_link.hpp"
#include "hw/device_work.hpp"
#include "hw/tracking_allocator.hpp"
#include "models/model_runner.hpp"
#include "plumbing/child_process.hpp"

namespace coinfer::hw {

// The runtime: its common ground and its rooms (hw/device_context.hpp), and the power meter.
struct DeviceRuntime::Impl {
  DeviceContext ctx;
  DeviceRooms rooms;
  std::unique_ptr<DeviceWork> work;
  std::unique_ptr<DeviceServerLink> link;
  Child meter;  // the power meter command (opt.power_command), if any

  long long run(const std::atomic<bool>& stop_flag);
  void meter_loop();
};

long long DeviceRuntime::Impl::run(const std::atomic<bool>& stop_flag) {
  ctx.stop = &stop_flag;
  const double join = ctx.device().join_at_s;
  work->cap_threads();  // throws, saying why, before any work starts
  // The work threads start (idle) before time zero, so that a testbed can cap them before the run.
  std::thread power;
  if (meter.pid() > 0) power = std::thread([this] { meter_loop(); });
  std::vector<std::thread> compute;  // one per processor of the board
  for (int p = 0; p < work->processors(); ++p) compute.emplace_back([this, p] { work->compute_loop(p); });
  std::thread upload([this] { work->upload_loop(); });
  while (!stop_flag && ctx.now() < join) std::this_thread::sleep_for(Seconds(std::min(0.05, join - ctx.now())));
  std::thread arrivals([this] { work->arrivals_loop(); });
  // The run's hard end (Scenario::hard_end_s, the simulator's too): a device that left early and
  // still waits for results keeps the run's drain, not leave_at_s + drain_s.
  const std::string fatal = link->serve(ctx.sc.hard_end_s());
  link->close_draining();  // whatever the connections it still drained held is over with the run
  {
    const auto held = ctx.lock.hold();
    work->finish(held, fatal);
  }
  arrivals.join();
  for (std::thread& t : compute) t.join();
  upload.join();
  if (power.joinable()) power.join();
  meter.close_channel();
  if (meter.pid() > 0) meter.stop(1);
  if (!fatal.empty()) throw RegistrationRefused(fatal);
  const auto held = ctx.lock.hold();
  return work->failed(held);
}

// Reads the power meter's lines until the run stops: each reading journaled at its time.
void DeviceRuntime::Impl::meter_loop() {
  std::string buffer;
  char buf[4096];
  while (!ctx.stopping() && meter.channel() >= 0) {
    pollfd p{meter.channel(), POLLIN, 0};
    if (::poll(&p, 1, 200) <= 0) continue;
    const ssize_t n = ::read(meter.channel(), buf, sizeof buf);
    if (n <= 0) {
      ctx.log("the power meter stopped (" + describe_exit_status(meter.wait()) + "); energy after this is not measured");
      return;
    }
    buffer.append(buf, static_cast<size_t>(n));
    for (size_t nl; (nl = buffer.find('\n')) != std::string::npos;) {
      const std::string line = buffer.substr(0, nl);
      buffer.erase(0, nl + 1);
      const size_t at = line.find_first_of("0123456789.");
      if (at == std::string::npos) continue;
      char* end = nullptr;
      const double w = std::strtod(line.c_str() + at, &end);
      if (end != line.c_str() + at && std::isfinite(w) && w >= 0) ctx.journal->power(ctx.now(), w);
    }
    if (buffer.size() > 65536) buffer.clear();  // no line ending: not a meter's output
  }
}

namespace {

// The LibTorch device computing each of the board's processors here (DeviceOptions::processor_devices;
// "" none): by default this machine's CPU for the default processor (slot 0) and a GPU for a processor
// of kind gpu where LibTorch sees one. Throws InputError for a mapping that cannot be.
std::vector<std::string> torch_devices_for(const DeviceSpec& d, const DeviceHardware& here, const DeviceOptions& opt) {
  const SourceLocation option_where{"--processor-device", 0, 0};
  std::vector<std::string> torch_devices(static_cast<size_t>(here.size()));
  for (const auto& [name, device] : opt.processor_devices) {
    const int slot = here.slot(name);
    if (slot < 0)
      throw InputError(option_where, "--processor-device",
                       "device " + d.id + " (" + d.type + ") has no processor '" + name + "' (its processors: " + here.describe() + ")");
    if (device == "none") continue;
    if (const std::string problem = models::torch_device_problem(device); !problem.empty())
      throw InputError(option_where, "--processor-device", "processor '" + name + "' of device " + d.id + ": " + problem);
    torch_devices[static_cast<size_t>(slot)] = device;
  }
  for (int p = 0; p < here.size(); ++p) {
    const std::string& name = here.processors[static_cast<size_t>(p)];
    if (opt.processor_devices.count(name)) continue;
    if (p == 0)
      torch_devices[0] = "cpu";
    else if (here.kinds[static_cast<size_t>(p)] == "gpu" && models::cuda_available())
      torch_devices[static_cast<size_t>(p)] = "cuda:0";
  }
  if (torch_devices[0].empty())
    throw InputError(option_where, "--processor-device",
                     "processor '" + here.processors[0] + "' of device " + d.id +
                         " is its default processor (forwarded batches run there): it needs a device here");
  // A device placed on another processor than its default one by `processor:` keeps the old rule
  // unless that processor is mapped: this machine's CPU stands for the default.
  if (!d.processor.empty() && d.processor != "cpu" && !opt.processor_devices.count(d.processor))
    throw InputError(d.where, "devices (id " + d.id + ").processor",
                     "the real device runtime computes on this machine's CPU; processor '" + d.processor +
                         "' is simulated only (coinfer run): remove the key, name processor: cpu, or map it (--processor-device " + d.processor +
                         "=cuda)");
  return torch_devices;
}

// A placement (strategy placement) on a processor that has no LibTorch device here is simulated only:
// throws InputError saying how to map one.
void check_placement_runs_here(const DeviceSpec& d, const DeviceHardware& here, const std::vector<std::string>& torch_devices) {
  if (d.strategy.placement.empty()) return;
  for (const std::string& p : d.strategy.placement.processors()) {
    const int slot = here.slot(p);
    if (slot >= 0 && !torch_devices[static_cast<size_t>(slot)].empty()) continue;
    const bool gpu = slot >= 0 && here.kinds[static_cast<size_t>(slot)] == "gpu";
    throw InputError(d.where, "devices (id " + d.id + ").strategy",
                     "the real device runtime has no LibTorch device for processor '" + p + "' here: a placement on '" + p +
                         "' is simulated only (coinfer run)" +
                         (gpu ? std::string("; running stages on a GPU needs a CUDA LibTorch with a visible GPU (") +
                                    (models::cuda_available() ? "this one has one: --processor-device " + p + "=cuda"
                                                              : "torch::cuda::is_available() is false here") +
                                    ")"
                              : std::string()) +
                         "; or let another device of this machine stand for it: --processor-device " + p + "=cpu");
  }
}

}  // namespace

DeviceRuntime::DeviceRuntime(Scenario scenario, ModelCatalog catalog, LutSet luts, DeviceOptions options) : impl_(std::make_unique<Impl>()) {
  Impl& impl = *impl_;
  impl.ctx.sc = std::move(scenario);
  impl.ctx.catalog = std::move(catalog);
  impl.ctx.luts = std::move(luts);
  impl.ctx.opt = std::move(options);
  impl.ctx.index = impl.ctx.sc.device_index(impl.ctx.opt.device_id);
  if (impl.ctx.index < 0) {
    std::string known;
    for (const auto& d : impl.ctx.sc.devices) known += (known.empty() ? "" : ", ") + d.id;
    throw InputError(SourceLocation{impl.ctx.sc.file, 0, 0}, "--id",
                     "unknown device '" + impl.ctx.opt.device_id + "' (scenario devices: " + known + ")");
  }
  const DeviceSpec& d = impl.ctx.sc.devices[impl.ctx.index];
  // The board's processors (its profile's; one where its type has none), each computed here by a
  // LibTorch device (DeviceOptions::processor_devices): by default this machine's CPU stands for the
  // device's default processor (slot 0) and a GPU for a processor of kind gpu where LibTorch sees one.
  const std::string stands_for = d.default_processor();
  const std::shared_ptr<const DeviceHardware> board = d.hardware;  // the profile's
  DeviceHardware here = board ? *board : single_processor_hardware(stands_for, 0);
  const SourceLocation option_where{"--processor-device", 0, 0};
  const std::vector<std::string> torch_devices = torch_devices_for(d, here, impl.ctx.opt);
  // Its memory (memory_gb, or its profile's): LibTorch's tensors may not pass it, so that a request
  // that needs more fails "out of memory" as in the simulator (the process's own code, libraries and
  // stacks are not counted, as the simulator counts tensors and weights only). The CPU's tensors are
  // counted against the main memory (pool 0); a GPU's own memory is its own (CUDA's allocator).
  impl.ctx.memory_processor = stands_for;
  if (d.hardware && d.hardware->pool_capacity_bytes.at(0) > 0) {
    TrackingAllocator::install();
    TrackingAllocator::instance().set_limit(static_cast<size_t>(d.hardware->pool_capacity_bytes[0]));
    log::info("device", "tensor memory limited to " + format_double(d.hardware->pool_capacity_bytes[0] / 1e6) + " MB (" + d.type + ")");
  }
  // The loop keeps the board's processors (the plans the simulator makes) but accounts no memory: the
  // real tensors are the limit.
  for (double& c : here.pool_capacity_bytes) c = 0;
  impl.ctx.sc.devices[static_cast<size_t>(impl.ctx.index)].hardware = std::make_shared<const DeviceHardware>(here);
  check_placement_runs_here(d, here, torch_devices);
  impl.ctx.spec = impl.ctx.catalog.instantiate(d.model, d.dataset);
  impl.ctx.num_stages = impl.ctx.spec.num_stages();
  for (const DeviceSegment& seg : make_device_plan(d.strategy, impl.ctx.num_stages, here, d.id).segments)
    if (seg.with >= 0)
      throw InputError(d.where, "devices (id " + d.id + ").strategy",
                       "a stage split between two processors (" + d.strategy.placement.to_string() +
                           ") runs in the simulator only: the real runtime runs whole stages on one processor each");
  try {
    impl.ctx.model =
        std::make_unique<models::DeviceModelRunner>(impl.ctx.spec, impl.ctx.sc.seed, impl.ctx.opt.input_file, torch_devices, here.processors);
  } catch (const InputError&) {
    throw;
  } catch (const TensorMemoryExhausted& e) {  // the weights and inputs alone do not fit the board's memory
    throw InputError(d.where, "devices (id " + d.id + ").memory_gb",
                     "the model's weights and inputs alone need more than the device's memory: " +
                         impl.ctx.out_of_memory_text(static_cast<double>(e.need), static_cast<double>(e.have)));
  } catch (const std::exception& e) {
    // models::DeviceModelRunner: "processor 'P' on DEVICE: why" when a processor's device cannot be used
    if (std::string(e.what()).rfind("processor ", 0) == 0) throw InputError(option_where, "--processor-device", e.what());
    if (impl.ctx.opt.input_file.empty()) throw;
    throw InputError(SourceLocation{impl.ctx.opt.input_file, 0, 0}, "--input", e.what());
  }
  {
    std::string mapped;
    for (int p = 0; p < here.size(); ++p)
      mapped += (mapped.empty() ? "" : ", ") +
                (here.processors[static_cast<size_t>(p)].empty() ? std::string("processor") : here.processors[static_cast<size_t>(p)]) + " on " +
                (torch_devices[static_cast<size_t>(p)].empty() ? std::string("none") : torch_devices[static_cast<size_t>(p)]);
    if (here.size() > 1) log::info("device", d.id + ": " + mapped);
  }
  impl.ctx.schedule = BandwidthSchedule(d, impl.ctx.sc.events);
  impl.ctx.shared_schedule = std::make_shared<const BandwidthSchedule>(impl.ctx.schedule);
  impl.ctx.availability = ServerAvailability(impl.ctx.sc);
  if (impl.ctx.sc.mobility.mid_transfer != MobilitySpec::MidTransfer::wait) impl.ctx.handovers = handovers_of(impl.ctx.sc, impl.ctx.opt.device_id);
  const std::string server_type = impl.ctx.sc.servers[impl.ctx.sc.server_index(d.server)].type;
  const LutKey dev_key = d.lut_key(d.model), srv_key{server_type, d.model, d.dataset};
  const DataParallelCosts router_costs =
      data_parallel_costs(d, impl.ctx.sc.access_point, impl.ctx.spec, impl.ctx.luts.contains(dev_key) ? &impl.ctx.luts.table(dev_key) : nullptr,
                          impl.ctx.luts.contains(srv_key) ? &impl.ctx.luts.table(srv_key) : nullptr);
  if (impl.ctx.opt.epoch_unix_s <= 0) impl.ctx.opt.epoch_unix_s = unix_now() + impl.ctx.opt.clock_skew_s;
  impl.ctx.journal = std::make_unique<JournalWriter>(impl.ctx.opt.records_out);
  if (impl.ctx.opt.records_stdout) impl.ctx.journal->also_to_stdout();
  impl.ctx.journal->note("device", impl.ctx.opt.device_id);
  if (!impl.ctx.opt.power_command.empty()) {
    ChildSpec meter;
    meter.argv = split_command_line(impl.ctx.opt.power_command, SourceLocation{"--power-command", 0, 0}, "--power-command");
    meter.connect_stdio = true;
    try {
      impl.meter = Child::start(meter);
    } catch (const std::exception& e) {
      throw InputError(SourceLocation{"--power-command", 0, 0}, "--power-command", e.what());
    }
  }
  impl.work = std::make_unique<DeviceWork>(impl.ctx, impl.rooms, router_costs);
  impl.link = std::make_unique<DeviceServerLink>(impl.ctx, impl.rooms);
  impl.rooms = DeviceRooms{impl.work.get(), impl.link.get()};
}

DeviceRuntime::~DeviceRuntime() = default;

long long DeviceRuntime::run(const std::atomic<bool>& stop) { return impl_->run(stop); }

}  // namespace coinfer::hw
