#pragma once
// Predictor sample sets (ACE-GNN's "co-inference samples"): systems x schemes, each with the
// system graph of the scheme (raw, unnormalised features) and the throughput and latencies it reached,
// simulated (`coinfer predictor samples`) or measured on a testbed (`coinfer predictor samples
// --add-testbed`). Written by io/, read by `coinfer predictor train|eval` (models/gin_predictor).
//
// HDF5 layout (one file; the same content gives byte-identical files):
//   /                     attrs: format = "coinfer-predictor-samples", schema_version = 1,
//                                provenance (text: what generated the samples, from which command)
//   /samples/<column>     one row per sample (S rows):
//     system               int64   the system's index in its generator (samples of one system share it)
//     system_key           string  the system: server type, workers, batch; each device's type, model, bandwidth
//     device_types, models string  comma-separated, sorted, distinct (for held-out-system splits)
//     scheme               string  the scheme (Scheme::to_string)
//     throughput_rps       double  label: completed requests per second of the whole system
//     mean_latency_ms, p95_latency_ms   double  labels (NaN when no request completed: throughput 0)
//     analytic_throughput_rps, analytic_mean_latency_ms   double  the analytic estimator's prediction
//     measured             int8    1 measured on a testbed, 0 simulated
//     source               string  the scenario file (simulated) or the run folder (measured)
//     node_offset, edge_offset   int64 (S + 1 rows): sample i's nodes are [node_offset[i], node_offset[i+1])
//   /nodes/type           int8    SystemNodeType (0 device, 1 middleware, 2 handler, 3 server, 4 global)
//   /nodes/latency_ms     double  the raw latency feature (sched/system_graph.hpp)
//   /nodes/settings       double  [N x 3]: workers, batch max size, batch window ms (server nodes)
//   /edges/source, /edges/target   int32   node indices local to the sample
// Limits: at most 10^6 samples, 512 nodes and 8192 edges per sample; labels finite and >= 0.
// Errors are InputErrors naming the file and dataset; files are written atomically. Files are parsed
// first in an isolated child (plumbing/isolated_reader.hpp): a corrupt file that crashes libhdf5 is an
// InputError too.
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "core/record_field.hpp"

namespace coinfer {

struct PredictorSample {
  std::int64_t system = 0;
  std::string system_key, device_types, models, scheme, source;
  double throughput_rps = 0, mean_latency_ms = 0, p95_latency_ms = 0;
  double analytic_throughput_rps = 0, analytic_mean_latency_ms = 0;
  bool measured = false;
  std::vector<int> node_type;
  std::vector<double> node_latency_ms;
  std::vector<double> node_settings;  // 3 per node
  std::vector<std::pair<int, int>> edges;
};

struct PredictorSampleSet {
  std::string provenance;
  std::vector<PredictorSample> samples;
};

// A sample's scalar fields as a table (core/record_field.hpp): the file's /samples columns (beside
// node_offset and edge_offset, which index /nodes and /edges), in this order.
const std::vector<RecordField<PredictorSample>>& predictor_sample_fields();

constexpr std::int64_t kPredictorSamplesSchema = 1;
void write_predictor_samples(const std::string& path, const PredictorSampleSet& set);
PredictorSampleSet read_predictor_samples(const std::string& path);
// The parse itself over what an HDF5 reader hands back (io/h5_file.hpp h5::Reader: an opened file,
// or the fuzzer's in-memory tree); InputError naming reader.path() and the dataset.
namespace h5 {
class Reader;
}
PredictorSampleSet read_predictor_samples_from(const h5::Reader& reader);

}  // namespace coinfer
