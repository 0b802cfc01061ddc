// The digest a sweep point is kept by: it changes with the content of the files a
// run reads and with the scenario as run, not with a file's modification alone.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "io/input_fingerprint.hpp"

namespace fs = std::filesystem;
using namespace coinfer;

TEST(InputFingerprint, Sha256OfKnownText) {
  // FIPS 180-2's example: SHA-256("abc").
  EXPECT_EQ(sha256_hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

TEST(InputFingerprint, AFilesDigestFollowsItsContent) {
  const fs::path d = fs::temp_directory_path() / ("coinfer-fp-" + std::to_string(::getpid()));
  fs::remove_all(d);
  fs::create_directories(d / "specs");
  std::ofstream(d / "trace.csv") << "t_s,mbps\n0,5\n";
  std::ofstream(d / "specs" / "a.yaml") << "name: a\n";
  std::ofstream(d / "code.cpp") << "int x;\n";
  ContentDigests first;
  const std::string file = first.of((d / "trace.csv").string()), folder = first.of(d.string());
  EXPECT_EQ(file.size(), 64u);
  EXPECT_EQ(first.of((d / "nothing.csv").string()), "missing");
  // Rewritten with the same bytes: the same digest (a touch re-runs nothing).
  std::ofstream(d / "trace.csv") << "t_s,mbps\n0,5\n";
  ContentDigests again;
  EXPECT_EQ(again.of((d / "trace.csv").string()), file);
  EXPECT_EQ(again.of(d.string()), folder);
  // One byte changed: both the file's and its folder's digests change.
  std::ofstream(d / "trace.csv") << "t_s,mbps\n0,6\n";
  ContentDigests edited;
  EXPECT_NE(edited.of((d / "trace.csv").string()), file);
  EXPECT_NE(edited.of(d.string()), folder);
  // A C++ source in a data folder is not data: editing it leaves the folder's digest alone.
  ContentDigests before_code;
  const std::string data_only = before_code.of(d.string());
  std::ofstream(d / "code.cpp") << "int y;\n";
  ContentDigests after_code;
  EXPECT_EQ(after_code.of(d.string()), data_only);
  fs::remove_all(d);
}
