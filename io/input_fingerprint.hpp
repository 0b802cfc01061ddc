#pragma once
// What a run's result depends on, as one digest: the scenario as run (after its
// overrides) and the content of every file it reads (the scenario file, LUTs, traces, device profiles,
// model specs: io/data_root.hpp run_data_files). A sweep keeps a point only while its digest is the
// one the point ran with, so an edit of any of those files re-runs exactly the points it changes.
// Reads the files (blocking I/O); digests are SHA-256 in lowercase hex.
#include <map>
#include <string>

#include "core/lut.hpp"
#include "core/scenario.hpp"

namespace coinfer {

// The SHA-256 of a byte string.
std::string sha256_hex(const std::string& bytes);

// Content digests of files and folders, each read once per cache. A folder's digest covers its data
// files (every regular file below it, by relative path, except C++ sources and Markdown: the models/
// folder holds the LibTorch code beside the specs); a path that cannot be read digests as "missing".
class ContentDigests {
 public:
  const std::string& of(const std::string& path);

 private:
  std::map<std::string, std::string> done_;
};

// The digest of `s` as it runs (Scenario::resolved_yaml) and of every data file of it with `luts`.
// `version_tag` is mixed in first: a change of what the figures mean (core/metrics.hpp) re-runs points
// made before it.
std::string input_fingerprint(const Scenario& s, const LutSet& luts, ContentDigests& files, const std::string& version_tag);

}  // namespace coinfer
