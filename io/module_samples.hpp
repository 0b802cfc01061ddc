#pragma once
// Module latency sample sets (the MEDN paper's training data): CSV files written by
// `coinfer profile --modules N` and read by `coinfer lut fill --samples`. Layout (traces/README.md):
//
//   # coinfer-module-samples schema 1
//   # provenance kind=measured
//   # provenance <key>=<value>          (one line per attribute: cpu, cores, threads, command, date, ...)
//   op,device_type,model,stage,mean_s,p50_s,count,<feature names of core/module_features.hpp>
//   edgeconv,x86-epyc-2vcpu,dgcnn~v3/modelnet40~v3,edgeconv1,0.0131,0.0130,3,1,512,...
//
// A set with its own features (`coinfer medn sample`: the MEDN paper's modules) adds, before the
// header, `# feature-classes <class>,<class>,...`: one class (sampling, measurable or inferable) per
// feature column, the feature columns being the header's columns after count, in order.
//
// Values: latencies in [1e-7, 86400] s, count >= 1, features finite and >= 0, at most 10^6 rows,
// every feature column present (in any order; extra columns refused). Errors are InputErrors naming
// the file, line and column; files are written atomically.
#include <string>

#include "core/module_features.hpp"

namespace coinfer {

void write_module_samples(const std::string& path, const ModuleSampleSet& set);
ModuleSampleSet read_module_samples(const std::string& path);

}  // namespace coinfer
