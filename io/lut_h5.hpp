#pragma once
// LUT files (HDF5, schema "coinfer-lut" version 2, documented in traces/README.md). One file holds the
// tables of one device type, one group per model/dataset. Version 2 adds the latency distributions
// (latency_quantile_levels, latency_quantiles_s) where a table has them; version 1 files are still
// read as they are (no distributions) and `coinfer lut upgrade` rewrites them as version 2.
#include <set>
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
// What one LUT file gives a run that consults the tables of some device types only.
struct LutFileContents {
  std::vector<LutTable> tables;  // the file's tables, when its device type is one of those wanted
  std::vector<LutKey> unread;    // else the keys of its tables (for messages and provenance), data not read
};
// One file for a run that may need some device types only: every table when `types` is null; else a
// file whose device type (root attribute device_type) is not in `types` has only its root attributes
// and group names read (for a run that needs two of the ten shipped types, about half its start-up
// time: bench/RESULTS.md "CI time", stop 93). The same isolation, limits and errors as read_lut_file;
// a file that is not a readable coinfer LUT is refused whatever its type.
LutFileContents read_lut_file_contents(const std::string& path, const std::set<std::string>* types);
// Several files as read_lut_file_contents, all in one isolated child (one fork instead of one per file,
// ~10 ms each): the answers of the files from the first up to the first that fails in any way (none
// when the child crashes or overruns its bounds). The caller reads the rest with
// read_lut_file_contents, in order, so each error is the one that file gives read alone.
std::vector<LutFileContents> read_lut_files_batch(const std::vector<std::string>& paths, const std::set<std::string>* types);
// The parse itself, in this process: only for trusted files (tests) and for the isolated child.
std::vector<LutTable> read_lut_file_in_process(const std::string& path);
// The same parse over what an HDF5 reader hands back (io/h5_file.hpp h5::Reader: a file, or the
// fuzzer's in-memory tree, tests/fuzz/h5_tree.hpp); InputError naming reader.path() and the object.
std::vector<LutTable> read_lut_tables(const h5::Reader& reader);
// The schema version a LUT file declares (read in the isolated child too); InputError as above.
int lut_file_schema_version(const std::string& path);

}  // namespace coinfer
