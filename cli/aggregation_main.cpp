// coinfer-aggregation (`coinfer aggregation`): measures one GNN inference on this CPU with one of the
// three aggregation schemes the feature decomposition paper compares (models/aggregation_schemes.hpp):
// PyG's standard gather-scatter, PyG's memory-efficient CSR aggregation with its format conversion,
// and feature decomposition over slices of a given width. The graph has a published graph's
// statistics (models/power_law_graph.hpp); the model is the paper's: the combination (a linear layer to
// the hidden width) before the aggregation, two layers, GCN, GAT or GraphSAGE-mean ("GSC").
// Prints one JSON object: the phases' median times, the peak tensor memory, the process's peak
// resident memory, and hardware counters over the aggregation phase where the kernel exposes them.
// With --memory-limit the measurement runs in a child process inside a memory cgroup (hw/memory_cap),
// and a run the kernel's OOM killer stops is reported as "status": "oom" (exit 0: an outcome, not an
// error). Bad options exit 2. `coinfer reproduce feature-decomposition` drives it (reproduce/README.md).
#include <CLI/CLI.hpp>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <torch/torch.h>
#include <torch/version.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <iostream>
#include <limits>
#include <thread>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#if __has_include(<valgrind/callgrind.h>)
#include <valgrind/callgrind.h>  // client requests: no-ops unless the program runs under callgrind
#else
#define CALLGRIND_START_INSTRUMENTATION
#define CALLGRIND_STOP_INSTRUMENTATION
#endif

#include "cli/commands.hpp"
#include "core/input_error.hpp"
#include "hw/compute_threads.hpp"
#include "hw/memory_cap.hpp"
#include "hw/perf_counters.hpp"
#include "hw/system_meter.hpp"
#include "hw/tracking_allocator.hpp"
#include "models/aggregation_schemes.hpp"
#include "models/power_law_graph.hpp"
#include "plumbing/child_process.hpp"

namespace {

using namespace coinfer;
using models::AggregationScheme;
using Clock = std::chrono::steady_clock;

// The paper's Table II (nodes, edges as it counts them) and the input feature widths of the datasets
// (Planetoid Pubmed 500 TF-IDF words; ogbn-proteins 8 edge-derived features; Reddit 602 word vectors).
struct PublishedGraph {
  const char* name;
  std::int64_t nodes, directed_edges, features;
  const char* source;
};
const PublishedGraph kGraphs[] = {
    {"pubmed", 19717, 88676, 500, "FD paper Table II: 19,717 vertices, 88,676 edges (avg degree 4.5, so directed); 500 features (Planetoid)"},
    {"proteins", 132534, 2 * 39561252LL, 8,
     "FD paper Table II: 132,534 vertices, 39,561,252 edges listed once per pair (avg degree 597 = 2 x 39.56 M / 132,534); 8 features (OGB)"},
    {"reddit", 232965, 114615892, 602,
     "FD paper Table II: 232,965 vertices, 114,615,892 directed edges (avg degree 492); 602 features (GraphSAGE's Reddit)"},
};

struct Options {
  std::string graph = "pubmed", model = "gcn", scheme = "standard";
  double edge_scale = 1;
  std::int64_t hidden = 16, slice_width = 0;
  int layers = 2, repeats = 3, warmup = 1, threads = 0;
  double memory_limit_mb = 0;
  std::uint64_t seed = 1;
  bool counters = false;
  bool keep_memory = false;  // glibc keeps freed blocks (no page faults for large temporaries)
  bool cache_sim = false;    // run under Valgrind's callgrind with this CPU's L1D and last-level cache
};

double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

double median(std::vector<double> v) {
  if (v.empty()) return std::nan("");
  std::sort(v.begin(), v.end());
  const size_t m = v.size() / 2;
  return v.size() % 2 ? v[m] : 0.5 * (v[m - 1] + v[m]);
}

double vm_hwm_bytes() {
  std::ifstream f("/proc/self/status");
  std::string line;
  while (std::getline(f, line))
    if (line.rfind("VmHWM:", 0) == 0) return std::stod(line.substr(6)) * 1024;
  return std::nan("");
}

// The default slice width: the paper's granularity ({GCN: 1, GAT: 8, GSC: 4} on the large graphs,
// {GCN: 4, GAT: 8, GSC: 4} on Pubmed; Sec. III).
std::int64_t paper_granularity(const std::string& graph, const std::string& model) {
  if (model == "gat") return 8;
  if (model == "sage") return 4;
  return graph == "pubmed" ? 4 : 1;
}

struct Layer {
  torch::Tensor w, w_root, att_src, att_dst, bias;
};

struct Measurement {
  std::map<std::string, std::vector<double>> phase_s;
  std::vector<double> total_s;
  double counts[hw::PerfCounters::kEvents] = {};
  bool counted[hw::PerfCounters::kEvents] = {};
  std::string why_not[hw::PerfCounters::kEvents];
};

class Study {
 public:
  Study(const Options& o, const PublishedGraph& g) : o_(o), scheme_(models::scheme_from_name(o.scheme)) {
    models::PowerLawGraphSpec spec;
    spec.nodes = g.nodes;
    spec.directed_edges = std::max<std::int64_t>(2, static_cast<std::int64_t>(std::llround(static_cast<double>(g.directed_edges) * o.edge_scale)));
    spec.seed = o.seed;
    graph_ = models::make_power_law_graph(spec);
    n_ = g.nodes;
    torch::manual_seed(static_cast<std::uint64_t>(o.seed));
    x_ = torch::randn({n_, g.features});
    heads_ = o.model == "gat" ? std::max<std::int64_t>(1, o.hidden / 8) : 1;
    std::int64_t in = g.features;
    for (int l = 0; l < o.layers; ++l) {
      Layer L;
      L.w = torch::randn({in, o.hidden}) / std::sqrt(static_cast<double>(in));
      if (o.model == "sage") L.w_root = torch::randn({in, o.hidden}) / std::sqrt(static_cast<double>(in));
      if (o.model == "gat") {
        L.att_src = torch::randn({1, heads_, o.hidden / heads_}) * 0.1;
        L.att_dst = torch::randn({1, heads_, o.hidden / heads_}) * 0.1;
      }
      L.bias = torch::zeros({o.hidden});
      layers_.push_back(L);
      in = o.hidden;
    }
  }

  std::int64_t edges() const { return graph_.edge_index.size(1); }
  const models::PowerLawGraph& graph() const { return graph_; }

  // One inference; phase times added to m; counters around the aggregation when `counters` is given.
  void infer(Measurement& m, hw::PerfCounters* counters) {
    const auto t_all = Clock::now();
    std::map<std::string, double> t;
    const torch::Tensor& ei = graph_.edge_index;
    // Edge weights and, for CSR, the format conversion: once per inference (PyG's transforms do it once per graph).
    auto t0 = Clock::now();
    torch::Tensor src = ei[0], dst = ei[1], weight;
    if (o_.model == "gcn") {  // gcn_norm: self loops, 1/sqrt(deg(src) deg(dst))
      auto loops = torch::arange(n_, ei.options());
      src = torch::cat({src, loops}), dst = torch::cat({dst, loops});
      auto deg = torch::zeros({n_}).index_add_(0, dst, torch::ones({dst.size(0)}));
      weight = deg.index_select(0, src).rsqrt() * deg.index_select(0, dst).rsqrt();
    } else if (o_.model == "sage") {  // the mean as weights 1/deg(dst)
      auto deg = torch::zeros({n_}).index_add_(0, dst, torch::ones({dst.size(0)})).clamp_min(1);
      weight = deg.reciprocal().index_select(0, dst);
    } else {  // GAT's attention needs self loops
      auto loops = torch::arange(n_, ei.options());
      src = torch::cat({src, loops}), dst = torch::cat({dst, loops});
    }
    t["edge_weights"] = seconds_since(t0);
    models::CsrAdjacency csr;
    if (scheme_ == AggregationScheme::csr) {
      t0 = Clock::now();
      csr = models::to_csr(src, dst, weight, n_);
      t["conversion"] = seconds_since(t0);
    }
    torch::Tensor h = x_;
    for (size_t l = 0; l < layers_.size(); ++l) {
      const Layer& L = layers_[l];
      t0 = Clock::now();
      torch::Tensor z = torch::matmul(h, L.w);  // the combination, ahead of the aggregation
      torch::Tensor root = o_.model == "sage" ? torch::matmul(h, L.w_root) : torch::Tensor();
      t["combination"] += seconds_since(t0);
      torch::Tensor agg;
      if (o_.model == "gat") {
        t0 = Clock::now();
        const std::int64_t H = heads_, D = o_.hidden / heads_;
        auto zh = z.view({n_, H, D});
        auto a_src = (zh * L.att_src).sum(-1), a_dst = (zh * L.att_dst).sum(-1);  // [n, H]
        auto e = torch::leaky_relu(a_src.index_select(0, src) + a_dst.index_select(0, dst), 0.2);
        auto alpha = models::edge_softmax(e, dst, n_);  // [E, H]
        t["attention"] += seconds_since(t0);
        t0 = Clock::now();
        if (counters) counters->start();
        CALLGRIND_START_INSTRUMENTATION;
        if (scheme_ == AggregationScheme::standard) {
          auto msg = zh.index_select(0, src) * alpha.unsqueeze(2);
          agg = torch::zeros({n_, H, D}).index_add_(0, dst, msg).reshape({n_, H * D});
        } else {
          std::vector<torch::Tensor> per_head;
          for (std::int64_t k = 0; k < H; ++k)
            per_head.push_back(models::sliced_aggregate(zh.select(1, k), src, dst, alpha.select(1, k).contiguous(), n_, slice_width()));
          agg = torch::cat(per_head, 1);
        }
      } else {
        t0 = Clock::now();
        if (counters) counters->start();
        CALLGRIND_START_INSTRUMENTATION;
        if (scheme_ == AggregationScheme::standard)
          agg = models::scatter_aggregate(z, src, dst, weight, n_);
        else if (scheme_ == AggregationScheme::csr)
          agg = models::csr_aggregate(csr, z);
        else
          agg = models::sliced_aggregate(z, src, dst, weight, n_, slice_width());
      }
      CALLGRIND_STOP_INSTRUMENTATION;  // no-ops unless run under callgrind (--cache-sim)
      if (counters) {
        counters->stop();
        for (int i = 0; i < hw::PerfCounters::kEvents; ++i) {
          const auto ev = static_cast<hw::PerfCounters::Event>(i);
          if (counters->count(ev) >= 0)
            m.counts[i] += counters->count(ev), m.counted[i] = true;
          else
            m.why_not[i] = counters->why_not(ev);
        }
      }
      t["aggregation"] += seconds_since(t0);
      t0 = Clock::now();
      auto out = agg + L.bias;
      if (root.defined()) out = out + root;
      h = l + 1 < layers_.size() ? torch::relu(out) : out;
      t["update"] += seconds_since(t0);
    }
    m.total_s.push_back(seconds_since(t_all));
    for (const auto& [k, v] : t) m.phase_s[k].push_back(v);
    sink_ += h.sum().item<double>();  // keeps the result alive until here
  }

  std::int64_t slice_width() const { return o_.slice_width > 0 ? o_.slice_width : paper_granularity(o_.graph, o_.model); }

 private:
  Options o_;
  AggregationScheme scheme_;
  models::PowerLawGraph graph_;
  std::int64_t n_ = 0, heads_ = 1;
  torch::Tensor x_;
  std::vector<Layer> layers_;
  double sink_ = 0;
};

nlohmann::ordered_json measure(const Options& o, const PublishedGraph& g) {
  torch::NoGradGuard no_grad;
  const std::string threads =
      hw::set_compute_threads(o.threads > 0 ? o.threads : static_cast<int>(std::max(1u, std::thread::hardware_concurrency())));
  if (o.keep_memory) hw::keep_tensor_memory();
  hw::TrackingAllocator::install();
  const auto t_setup = Clock::now();
  Study study(o, g);
  const double setup_s = seconds_since(t_setup);
  const double resident_before = static_cast<double>(hw::TrackingAllocator::instance().current());
  hw::TrackingAllocator::instance().reset_peak();
  Measurement warm, m;
  for (int i = 0; i < o.warmup; ++i) study.infer(warm, nullptr);
  std::unique_ptr<hw::PerfCounters> counters;
  if (o.counters) counters = std::make_unique<hw::PerfCounters>();
  for (int i = 0; i < o.repeats; ++i) study.infer(m, i + 1 == o.repeats ? counters.get() : nullptr);
  nlohmann::ordered_json j;
  j["format"] = "coinfer-aggregation 1";
  j["status"] = "ok";
  j["graph"] = {{"name", g.name},
                {"nodes", g.nodes},
                {"directed_edges", study.edges()},
                {"published_directed_edges", g.directed_edges},
                {"edge_scale", o.edge_scale},
                {"features", g.features},
                {"max_degree", study.graph().max_degree},
                {"repeated_edge_share", study.graph().repeated_share},
                {"generator", "Chung-Lu power law, gamma 2.5, seed " + std::to_string(o.seed) + " (models/power_law_graph.hpp)"},
                {"source", g.source}};
  j["model"] = o.model;
  j["scheme"] = o.scheme;
  j["hidden"] = o.hidden;
  j["layers"] = o.layers;
  if (o.scheme == "sliced") j["slice_width"] = study.slice_width();
  j["threads"] = threads;
  j["allocator"] =
      o.keep_memory ? "glibc, freed memory kept (mmap and trim thresholds 1 GiB)" : "glibc defaults (large blocks mapped and unmapped per tensor)";
  j["repeats"] = o.repeats;
  j["warmup"] = o.warmup;
  j["setup_s"] = setup_s;
  nlohmann::ordered_json ph;
  for (const auto& [k, v] : m.phase_s) ph[k] = median(v);
  j["phase_s"] = ph;
  j["total_s"] = median(m.total_s);
  j["total_s_all"] = m.total_s;
  j["input_bytes"] = resident_before;
  j["peak_tensor_bytes"] = static_cast<double>(hw::TrackingAllocator::instance().peak());
  j["peak_resident_bytes"] = vm_hwm_bytes();
  if (o.counters) {
    nlohmann::ordered_json c = nlohmann::ordered_json::object(), why = nlohmann::ordered_json::object();
    using P = hw::PerfCounters;
    for (int i = 0; i < P::kEvents; ++i) {
      if (m.counted[i])
        c[P::event_name(static_cast<P::Event>(i))] = m.counts[i];
      else
        why[P::event_name(static_cast<P::Event>(i))] = m.why_not[i].empty() ? "not counted" : m.why_not[i];
    }
    auto rate = [&](int a, int b) -> nlohmann::json {
      if (!m.counted[a] || !m.counted[b] || m.counts[b] <= 0) return nullptr;
      return m.counts[a] / m.counts[b];
    };
    j["counters"] = {{"region", "the aggregation phases of the last timed inference"},
                     {"counts", c},
                     {"l1d_miss_rate", rate(P::l1d_miss, P::l1d_access)},
                     {"llc_miss_rate", rate(P::llc_miss, P::llc_access)},
                     {"dtlb_miss_rate", rate(P::dtlb_miss, P::dtlb_access)},
                     {"ipc", rate(P::instructions, P::cycles)},
                     {"unavailable", why}};
  }
  j["cpu"] = hw::cpu_model_name();
  j["libtorch"] = TORCH_VERSION;
  return j;
}

// Runs `body` in a child inside a memory cgroup of `limit_bytes`; the child's JSON comes back on a
// pipe. An OOM kill is an outcome ("status": "oom").
nlohmann::ordered_json measure_capped(const Options& o, const PublishedGraph& g) {
  std::string why;
  if (!hw::MemoryCap::available(&why))
    throw InputError(SourceLocation{"--memory-limit", 0, 0}, "--memory-limit", "no cgroup memory controller here: " + why);
  int go[2], back[2];
  if (::pipe(go) != 0 || ::pipe(back) != 0) throw std::runtime_error("pipe failed");
  const pid_t pid = ::fork();
  if (pid < 0) throw std::runtime_error("fork failed");
  if (pid == 0) {
    ::close(go[1]), ::close(back[0]);
    char c;
    if (::read(go[0], &c, 1) != 1) ::_exit(3);  // the parent died before capping us
    std::string text;
    try {
      text = measure(o, g).dump();
    } catch (const std::exception& e) {
      text = nlohmann::json{{"status", "error"}, {"error", e.what()}}.dump();
    }
    size_t at = 0;
    while (at < text.size()) {
      const ssize_t w = ::write(back[1], text.data() + at, text.size() - at);
      if (w <= 0) ::_exit(4);
      at += static_cast<size_t>(w);
    }
    ::_exit(0);
  }
  ::close(go[0]), ::close(back[1]);
  std::unique_ptr<hw::MemoryCap> cap;
  try {
    cap = hw::MemoryCap::apply_to(pid, o.memory_limit_mb * 1024 * 1024, "agg" + std::to_string(pid));
  } catch (...) {
    ::kill(pid, SIGKILL);
    ::waitpid(pid, nullptr, 0);
    throw;
  }
  if (::write(go[1], "g", 1) != 1) {
  }
  std::string text;
  char buf[65536];
  for (ssize_t r; (r = ::read(back[0], buf, sizeof buf)) > 0;) text.append(buf, static_cast<size_t>(r));
  int status = 0;
  ::waitpid(pid, &status, 0);
  const long kills = cap->oom_kills();
  const double peak = cap->peak_bytes();
  cap.reset();
  nlohmann::ordered_json j;
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0 && !text.empty()) {
    j = nlohmann::ordered_json::parse(text);
  } else {
    const bool oom = kills > 0 || (WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
    j["format"] = "coinfer-aggregation 1";
    j["status"] = oom ? "oom" : "failed";
    j["graph"] = {{"name", g.name}};
    j["model"] = o.model;
    j["scheme"] = o.scheme;
    j["hidden"] = o.hidden;
    j["cpu"] = hw::cpu_model_name();
    if (!oom) j["exit"] = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  }
  j["memory_limit_bytes"] = o.memory_limit_mb * 1024 * 1024;
  j["oom_kills"] = kills;
  if (std::isfinite(peak)) j["cgroup_peak_bytes"] = peak;
  return j;
}

// This CPU's cache of `level` and `type` ("Data", "Unified") from sysfs: size, ways, line (bytes).
struct CacheGeometry {
  long size = 0, ways = 0, line = 0;
};
CacheGeometry cache_geometry(int level, const std::string& type) {
  namespace fs = std::filesystem;
  auto read = [](const fs::path& p) {
    std::ifstream f(p);
    std::string v;
    std::getline(f, v);
    return v;
  };
  std::error_code ec;
  for (const auto& e : fs::directory_iterator("/sys/devices/system/cpu/cpu0/cache", ec)) {
    if (e.path().filename().string().rfind("index", 0) != 0) continue;
    if (read(e.path() / "level") != std::to_string(level) || read(e.path() / "type") != type) continue;
    CacheGeometry g;
    std::string size = read(e.path() / "size");
    long mult = 1;
    if (!size.empty() && (size.back() == 'K' || size.back() == 'M')) mult = size.back() == 'K' ? 1024 : 1024 * 1024, size.pop_back();
    try {
      g.size = std::stol(size) * mult;
      g.ways = std::stol(read(e.path() / "ways_of_associativity"));
      g.line = std::stol(read(e.path() / "coherency_line_size"));
    } catch (const std::exception&) {
      continue;
    }
    return g;
  }
  return {};
}

// The measurement again under Valgrind's callgrind with its cache simulator set to this CPU's L1 data
// cache and last-level cache (sysfs), instrumented over the aggregation phases only (client requests
// in infer()), one thread, one inference of one layer (every layer aggregates at the hidden width):
// L1D and LLC read miss rates where no hardware counter is exposed. Simulated caches (two levels, LRU, no prefetcher, no TLB): a model of this CPU's, not its
// counters.
nlohmann::ordered_json measure_cache_sim(const Options& o) {
  CacheGeometry d1 = cache_geometry(1, "Data"), ll;
  for (int level = 4; level >= 2 && ll.size == 0; --level) ll = cache_geometry(level, "Unified");
  if (d1.size == 0 || ll.size == 0) throw std::runtime_error("this CPU's cache sizes are not in /sys/devices/system/cpu/cpu0/cache");
  char dir_template[] = "/tmp/coinfer-cachesim-XXXXXX";
  if (::mkdtemp(dir_template) == nullptr) throw std::runtime_error("cannot make a temporary folder");
  const std::string dir = dir_template, out = dir + "/callgrind.out";
  auto geometry = [](const CacheGeometry& g) { return std::to_string(g.size) + "," + std::to_string(g.ways) + "," + std::to_string(g.line); };
  ChildSpec spec;
  spec.argv = {"valgrind",
               "--tool=callgrind",
               "--cache-sim=yes",
               "--instr-atstart=no",
               "--D1=" + geometry(d1),
               "--LL=" + geometry(ll),
               "--callgrind-out-file=" + out,
               "/proc/self/exe",
               "--graph",
               o.graph,
               "--model",
               o.model,
               "--scheme",
               o.scheme,
               "--hidden",
               std::to_string(o.hidden),
               "--edge-scale",
               std::to_string(o.edge_scale),
               "--layers",
               "1",
               "--seed",
               std::to_string(o.seed),
               "--threads",
               "1",
               "--repeats",
               "1",
               "--warmup",
               "0"};
  spec.argv[7] = std::filesystem::canonical("/proc/self/exe").string();
  if (o.slice_width > 0) spec.argv.insert(spec.argv.end(), {"--slice-width", std::to_string(o.slice_width)});
  spec.capture_stdout = spec.capture_stderr = true;
  ChildResult r;
  try {
    r = run_child(spec);
  } catch (const std::exception& e) {
    std::filesystem::remove_all(dir);
    throw std::runtime_error(std::string("valgrind could not be started (scripts/setup.sh installs it): ") + e.what());
  }
  std::ifstream f(out);
  std::string line, events, totals;
  while (std::getline(f, line)) {
    if (line.rfind("events:", 0) == 0) events = line.substr(7);
    if (line.rfind("summary:", 0) == 0 || line.rfind("totals:", 0) == 0) totals = line.substr(line.find(':') + 1);
  }
  std::filesystem::remove_all(dir);
  if (r.status != 0 || totals.empty())
    throw std::runtime_error("the run under callgrind failed (exit " + std::to_string(r.status) +
                             "): " + r.err.substr(r.err.size() > 400 ? r.err.size() - 400 : 0));
  nlohmann::ordered_json j = nlohmann::ordered_json::parse(r.out);
  std::map<std::string, double> v;
  std::istringstream en(events), tn(totals);
  for (std::string name; en >> name;) {
    double x = 0;
    tn >> x;
    v[name] = x;
  }
  auto rate = [&](const char* a, const char* b) -> nlohmann::json {
    if (!v.count(a) || !v.count(b) || v[b] <= 0) return nullptr;
    return v[a] / v[b];
  };
  j["cache_simulation"] = {
      {"tool", "valgrind callgrind --cache-sim=yes, instrumented over the aggregation of one layer of one inference, one thread"},
      {"d1", {{"bytes", d1.size}, {"ways", d1.ways}, {"line", d1.line}}},
      {"ll", {{"bytes", ll.size}, {"ways", ll.ways}, {"line", ll.line}}},
      {"events", v},
      {"l1d_miss_rate", rate("D1mr", "Dr")},
      {"llc_miss_rate", rate("DLmr", "D1mr")},
      {"dtlb_miss_rate", nullptr},
      {"ipc", nullptr},
      {"note",
       "simulated two-level caches of this CPU's sizes (LRU, no prefetcher, no TLB, no cycles): L1D misses per data read, "
       "last-level misses per L1D read miss; TLB and IPC are not simulated"}};
  j["threads"] = "torch=1 (under valgrind)";
  return j;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{
      "coinfer aggregation: time one GNN inference on this CPU with PyG's standard aggregation, PyG's "
      "memory-efficient CSR aggregation or feature decomposition, on a graph with a published graph's statistics "
      "(prints one JSON object; models/README.md \"Aggregation schemes\")"};
  app.name("coinfer aggregation");
  Options o;
  app.add_option("--graph", o.graph, "pubmed, proteins or reddit (the FD paper's Table II; default pubmed)")
      ->check(CLI::IsMember({"pubmed", "proteins", "reddit"}));
  app.add_option("--edge-scale", o.edge_scale, "fraction of the published edge count to generate, nodes kept (default 1; (0, 1])");
  app.add_option("--model", o.model, "gcn, gat or sage (GraphSAGE mean, the paper's GSC); default gcn")->check(CLI::IsMember({"gcn", "gat", "sage"}));
  app.add_option("--scheme", o.scheme,
                 "standard (PyG's gather-scatter), csr (PyG's memory-efficient aggregation) or sliced (feature decomposition); default standard")
      ->check(CLI::IsMember({"standard", "csr", "sliced"}));
  app.add_option("--hidden", o.hidden, "hidden width: the combination's output and the aggregation's width (default 16; 1..4096)");
  app.add_option("--slice-width", o.slice_width,
                 "columns per slice with --scheme sliced (default: the paper's granularity, GCN 1 (4 on pubmed), GAT 8, GSC 4)");
  app.add_option("--layers", o.layers, "GNN layers (default 2; 1..8)");
  app.add_option("--repeats", o.repeats, "timed inferences (median reported; default 3; 1..1000)");
  app.add_option("--warmup", o.warmup, "untimed inferences first (default 1; 0..100)");
  app.add_option("--threads", o.threads, "LibTorch intra-op threads (default: every core)");
  app.add_option("--seed", o.seed, "graph, features and weights (default 1)");
  app.add_flag("--counters", o.counters, "count cache and TLB misses and IPC over the aggregation (perf_event_open; unavailable events are said)");
  app.add_flag("--keep-memory", o.keep_memory,
               "let glibc keep freed tensor memory for reuse (as coinfer's runtime does) instead of its default, which maps and "
               "unmaps every large temporary (as PyG in Python runs); shows what page faults cost each scheme");
  app.add_flag("--cache-sim", o.cache_sim,
               "simulate this CPU's L1 data and last-level caches with Valgrind (callgrind) over the aggregation: miss rates where "
               "no hardware counter is exposed (one layer, one thread, one inference, ~100x slower)");
  app.add_option("--memory-limit", o.memory_limit_mb, "run inside a memory cgroup of this many MiB (root); an OOM kill is reported as status oom");
  std::string command_line;
  if (const int rc = cli::parse_command_line(app, argc, argv, command_line); rc >= 0) return rc;  // -q and -v as every companion
  return cli::guarded([&]() -> int {
    auto bad = [](const std::string& opt, const std::string& why) { throw InputError(SourceLocation{opt, 0, 0}, opt, why); };
    if (!(o.edge_scale > 0 && o.edge_scale <= 1)) bad("--edge-scale", "must be in (0, 1]");
    if (o.hidden < 1 || o.hidden > 4096) bad("--hidden", "must be 1..4096");
    if (o.slice_width < 0 || o.slice_width > 4096) bad("--slice-width", "must be 1..4096");
    if (o.slice_width > 0 && o.scheme != "sliced") bad("--slice-width", "only with --scheme sliced");
    if (o.layers < 1 || o.layers > 8) bad("--layers", "must be 1..8");
    if (o.repeats < 1 || o.repeats > 1000) bad("--repeats", "must be 1..1000");
    if (o.warmup < 0 || o.warmup > 100) bad("--warmup", "must be 0..100");
    if (o.threads < 0 || o.threads > 1024) bad("--threads", "must be 0..1024");
    if (o.memory_limit_mb < 0 || (o.memory_limit_mb > 0 && o.memory_limit_mb < 16)) bad("--memory-limit", "must be at least 16 MiB");
    if (o.model == "gat" && o.scheme == "csr") bad("--scheme", "PyG's memory-efficient aggregation has no GAT (the paper omits it too)");
    if (o.model == "gat" && o.hidden % std::max<std::int64_t>(1, o.hidden / 8) != 0)
      bad("--hidden", "GAT needs a hidden width that its heads (hidden / 8) divide");
    const PublishedGraph* g = nullptr;
    for (const auto& p : kGraphs)
      if (o.graph == p.name) g = &p;
    if (o.cache_sim && (o.memory_limit_mb > 0 || o.counters)) bad("--cache-sim", "not with --memory-limit or --counters");
    const nlohmann::ordered_json j = o.cache_sim ? measure_cache_sim(o) : o.memory_limit_mb > 0 ? measure_capped(o, *g) : measure(o, *g);
    std::cout << j.dump() << std::endl;
    return 0;
  });
}
