#pragma once
// Import of user measurements from CSV (columns documented in traces/README.md):
// device_type,model,dataset,start,end,batch,mean_ms,p50_ms,p95_ms,std_ms,count[,peak_memory_bytes]
#include <string>

#include "core/lut.hpp"
#include "io/model_spec_loader.hpp"

namespace coinfer {

// All rows must name one device type. Bytes per split come from the model spec. `source` says where
// the measurements came from and is stored in the provenance (required, non-empty).
std::vector<LutTable> import_lut_csv(const std::string& csv_file, const ModelCatalog& models, const std::string& source);

}  // namespace coinfer
