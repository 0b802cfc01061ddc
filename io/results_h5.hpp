#pragma once
// results.h5 writer/reader (schema "coinfer-results" version 1, documented in sim/README.md).
#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "core/run_results.hpp"

namespace coinfer {

// 2: text attributes variable-length UTF-8; service_time and transfer_bytes attributes.
// 3: /devices gains throughput_rps (results delivered inside the measurement window), throughput_incl_drain_rps,
//    offered_rps and saturated (core/metrics.hpp); summary.json's throughput_rps changed to the same rule.
constexpr int kResultsSchemaVersion = 3;

// Writes atomically. Same results -> byte-identical file.
void write_results_h5(const std::string& path, const RunResults& r);

// results.h5 for a run that hands its requests over as they finish (sim::SimulationOptions::
// stream_requests): the requests in blocks, in id order, then everything else at finish(). It holds
// at most `buffer_rows` requests: a run with no more is written exactly as write_results_h5 writes it
// (each /requests column one contiguous dataset); past that the /requests columns grow block by block
// as chunked datasets (h5::File::append: the same values, another layout), so a run's length does not
// set the memory its results take. Nothing appears at `path` before finish() (an AtomicFile): a writer
// destroyed without it removes what it wrote. Blocks (file I/O); throws InputError naming the file.
class ResultsH5Writer {
 public:
  static constexpr std::size_t kBufferRows = 65536;
  explicit ResultsH5Writer(std::string path, std::size_t buffer_rows = kBufferRows);
  ~ResultsH5Writer();
  ResultsH5Writer(const ResultsH5Writer&) = delete;
  ResultsH5Writer& operator=(const ResultsH5Writer&) = delete;
  // The next requests (after every earlier block's); moved from, left empty.
  void add_requests(std::vector<RequestRecord>& block);
  // r.requests (if any) after the blocks, then the rest of r; commits the file.
  void finish(const RunResults& r);
  // Requests written or held so far.
  long long requests() const { return requests_; }

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
  long long requests_ = 0;
};
// Reads back the request table (used by tests and tools); devices/events are read by plots/ in Python.
std::vector<RequestRecord> read_request_records(const std::string& path);
// The same over what an HDF5 reader hands back (io/h5_file.hpp h5::Reader: an opened file, or the
// fuzzer's in-memory tree); InputError naming reader.path() and the dataset.
namespace h5 {
class Reader;
}
std::vector<RequestRecord> read_request_records_from(const h5::Reader& reader);

}  // namespace coinfer
