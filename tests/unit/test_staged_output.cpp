// StagedOutput over an earlier output: the files the earlier output's marker lists
// are replaced, anything else in the folder is kept and named.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "plumbing/atomic_dir.hpp"

namespace fs = std::filesystem;
using namespace coinfer;

namespace {
fs::path fresh_dir(const std::string& name) {
  fs::path d = fs::temp_directory_path() / ("coinfer-staged-" + name + "-" + std::to_string(::getpid()));
  fs::remove_all(d);
  return d;
}
void write(const fs::path& p, const std::string& text) { std::ofstream(p) << text; }
std::string read(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}
void output(const fs::path& dir, const std::vector<std::pair<std::string, std::string>>& files, std::vector<std::string>* kept = nullptr) {
  StagedOutput out(dir.string(), "--out");
  for (const auto& [name, text] : files) write(out.path(name), text);
  out.commit();
  if (kept) *kept = out.kept();
}
}  // namespace

TEST(StagedOutput, TheMarkerListsTheFilesTheOutputWrote) {
  const fs::path d = fresh_dir("list");
  output(d, {{"results.h5", "r"}, {"summary.json", "s"}});
  const std::string marker = read(d / kOutputMarker);
  // After the header line "files:", one name per line, the marker itself not among them.
  EXPECT_NE(marker.find("\nfiles:\nresults.h5\nsummary.json\n"), std::string::npos) << marker;
  fs::remove_all(d);
}

TEST(StagedOutput, AReRunReplacesItsOwnFilesAndKeepsTheUsers) {
  const fs::path d = fresh_dir("keep");
  output(d, {{"results.h5", "old"}, {"figure_a.png", "old figure"}});
  write(d / "report.html", "the user's");
  std::vector<std::string> kept;
  output(d, {{"results.h5", "new"}}, &kept);
  EXPECT_EQ(read(d / "results.h5"), "new");
  EXPECT_FALSE(fs::exists(d / "figure_a.png"));  // the earlier output's own file: stale, gone
  EXPECT_EQ(read(d / "report.html"), "the user's");
  ASSERT_EQ(kept.size(), 1u);
  EXPECT_EQ(kept[0], "report.html");
  // The kept file is not listed as coinfer's: a third output keeps it again.
  output(d, {{"results.h5", "third"}}, &kept);
  EXPECT_EQ(read(d / "report.html"), "the user's");
  fs::remove_all(d);
}

TEST(StagedOutput, AUserFileNamedLikeANewOutputIsKeptBesideIt) {
  const fs::path d = fresh_dir("clash");
  output(d, {{"results.h5", "old"}});
  write(d / "summary.json", "the user's");  // not written by the first output, written by the second
  std::vector<std::string> kept;
  output(d, {{"results.h5", "new"}, {"summary.json", "new summary"}}, &kept);
  EXPECT_EQ(read(d / "summary.json"), "new summary");
  EXPECT_EQ(read(d / "summary.json.kept"), "the user's");
  ASSERT_EQ(kept.size(), 1u);
  EXPECT_EQ(kept[0], "summary.json (as summary.json.kept)");
  fs::remove_all(d);
}

// An output of a program before the list (a marker without "files:"): only what the new output
// writes again is replaced; the rest is kept.
TEST(StagedOutput, AnOutputWithoutAListKeepsWhatTheNewOneDoesNotWrite) {
  const fs::path d = fresh_dir("legacy");
  fs::create_directories(d);
  write(d / kOutputMarker, "written by coinfer: this folder is replaced as a whole by the next output written to it\n");
  write(d / "results.h5", "old");
  write(d / "latency_timeline.png", "a figure");
  output(d, {{"results.h5", "new"}});
  EXPECT_EQ(read(d / "results.h5"), "new");
  EXPECT_EQ(read(d / "latency_timeline.png"), "a figure");
  fs::remove_all(d);
}
