// libFuzzer target: the real runtime's request journals (hw/record_journal.hpp), the files `coinfer
// collect` and the testbed read back from boards: read_journal, read_journal_clock,
// read_journal_power and journal_device on arbitrary bytes; and the same bytes as a decisions journal
// (io/decisions_jsonl.hpp read_decisions_jsonl: both walk a record field table, io/record_json.hpp). Bad input must be an InputError (exit 2
// in the CLI); any other exception, a crash, a sanitizer report (1e300 cast to an integer id was one),
// a leak or a hang is a bug. Every journal read_journal accepts must have one record per id, in order.
// Built and run (bounded) by tests/fuzz/run_fuzz.sh.
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <string>

#include "tests/fuzz/fuzz_support.hpp"
#include "core/input_error.hpp"
#include "hw/record_journal.hpp"
#include "io/decisions_jsonl.hpp"

using namespace coinfer;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const std::string file = fuzz::scratch_path("journal", ".jsonl");
  fuzz::write_input(file, data, size);
  // These three never throw: they skip what they cannot read.
  (void)hw::read_journal_clock(file);
  (void)hw::read_journal_power(file);
  (void)hw::journal_device(file);
  fuzz::refusals_only([&] {
    const auto recs = hw::read_journal(file);
    for (size_t i = 1; i < recs.size(); ++i)
      if (!(recs[i - 1].id < recs[i].id)) fuzz::finding("records not in strictly increasing id order");
  });
  fuzz::refusals_only([&] { (void)read_decisions_jsonl(file); });
  return 0;
}
