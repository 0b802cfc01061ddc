#pragma once
// LUT files (HDF5, schema "coinfer-lut" version 2, documented in traces/README.md). One file holds the
// tables of one device type, one group per model/dataset. Version 2 adds the latency distributions
// (latency_quantile_levels, latency_quantiles_s) where a table has them; version 1 files are still
// read as they are (no distributions) and `coinfer lut upgrade` rewrites them as version 2.
#include <string>
#include <vector>

#include "core/lut.hpp"

namespace coinfer {

namespace h5 {
class Reader;
}

// Version 3 adds estimated entries (latency_estimate_error/_method/_methods, written by coinfer lut
// fill); version 4 the root attribute `processor` (which of the type's processors the file's tables
// describe; one processor per file). Files with neither are still written as version 2, so older
// builds keep reading them; a file without `processor` describes the type's only processor.
constexpr int kLutSchemaVersion = 4;
constexpr int kLutOldestReadableSchema = 1;

// The schema version write_lut_file gives these tables: 4 where they name a processor, else 3 where
// one has estimated entries, else 2.
int lut_schema_version_for(const std::vector<LutTable>& tables);
// Writes atomically (temporary name, then rename). All tables must share one device type and processor.
void write_lut_file(const std::string& path, const std::vector<LutTable>& tables);
// Throws InputError naming the file and object for a missing file, corrupt data, another schema or an
// implausible value (LutTable::check_values). Never crashes on any file: libhdf5 1.10 can crash on
// corrupted metadata, so the file is parsed in a forked child process (with an address-space cap of
// limits::kLutReaderMemoryBytes and a limit of kLutReaderTimeoutS seconds) that hands the tables back
// through a pipe (io/lut_codec.hpp); a child that dies or overruns is reported as a corrupt file.
std::vector<LutTable> read_lut_file(const std::string& path);
// The parse itself, in this process: only for trusted files (tests) and for the isolated child.
std::vector<LutTable> read_lut_file_in_process(const std::string& path);
// The same parse over what an HDF5 reader hands back (io/h5_file.hpp h5::Reader: a file, or the
// fuzzer's in-memory tree, tests/fuzz/h5_tree.hpp); InputError naming reader.path() and the object.
std::vector<LutTable> read_lut_tables(const h5::Reader& reader);
// The schema version a LUT file declares (read in the isolated child too); InputError as above.
int lut_file_schema_version(const std::string& path);

}  // namespace coinfer
