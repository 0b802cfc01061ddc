#pragma once
// results.h5 writer/reader (schema "coinfer-results" version 1, documented in sim/README.md).
#include <string>

#include "core/run_results.hpp"

namespace coinfer {

// 2: text attributes variable-length UTF-8; service_time and transfer_bytes attributes.
// 3: /devices gains throughput_rps (results delivered inside the measurement window), throughput_incl_drain_rps,
//    offered_rps and saturated (core/metrics.hpp); summary.json's throughput_rps changed to the same rule.
constexpr int kResultsSchemaVersion = 3;

// Writes atomically. Same results -> byte-identical file.
void write_results_h5(const std::string& path, const RunResults& r);
// Reads back the request table (used by tests and tools); devices/events are read by plots/ in Python.
std::vector<RequestRecord> read_request_records(const std::string& path);
// The same over what an HDF5 reader hands back (io/h5_file.hpp h5::Reader: an opened file, or the
// fuzzer's in-memory tree); InputError naming reader.path() and the dataset.
namespace h5 {
class Reader;
}
std::vector<RequestRecord> read_request_records_from(const h5::Reader& reader);

}  // namespace coinfer
