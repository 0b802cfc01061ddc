// RFC 4180 CSV (io/csv.hpp): the cases the RFC names, our two extensions (comments, trimming), errors
// with lines, and a search: any fields written by csv_record read back identical.
#include <gtest/gtest.h>

#include <random>

#include "core/input_error.hpp"
#include "io/csv.hpp"

using namespace coinfer;

TEST(Csv, QuotedFieldsHoldCommasQuotesAndLineBreaks) {
  const auto r = parse_csv("a,\"b,c\",\"say \"\"hi\"\"\"\r\n\"two\nlines\",x,\n", "f.csv");
  ASSERT_EQ(r.size(), 2u);
  EXPECT_EQ(r[0].fields, (std::vector<std::string>{"a", "b,c", "say \"hi\""}));
  EXPECT_EQ(r[0].line, 1);
  EXPECT_EQ(r[1].fields, (std::vector<std::string>{"two\nlines", "x", ""}));  // trailing comma: an empty field
  EXPECT_EQ(r[1].line, 2);
  EXPECT_TRUE(r[1].quoted[0]);
  EXPECT_FALSE(r[1].quoted[1]);
}

TEST(Csv, CommentsEmptyLinesAndSpacesAroundUnquotedFields) {
  const auto r = parse_csv("# source: test\n\n time_s , bandwidth_mbps \n0, 5\n\" kept \",1\n", "f.csv");
  ASSERT_EQ(r.size(), 3u);
  EXPECT_EQ(r[0].fields, (std::vector<std::string>{"time_s", "bandwidth_mbps"}));
  EXPECT_EQ(r[0].line, 3);
  EXPECT_EQ(r[1].fields, (std::vector<std::string>{"0", "5"}));
  EXPECT_EQ(r[2].fields[0], " kept ");  // quoted: exact
  EXPECT_EQ(r[2].line, 5);
}

TEST(Csv, MalformedQuotesAreErrorsNamingFileAndLine) {
  auto message = [](const std::string& text) {
    try {
      parse_csv(text, "bad.csv");
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  EXPECT_NE(message("a,b\n\"open,c\nd\n").find("bad.csv:2"), std::string::npos) << message("a,b\n\"open,c\nd\n");
  EXPECT_NE(message("a,b\n\"open,c\nd\n").find("not closed"), std::string::npos);
  EXPECT_NE(message("a\n\"x\"y,z\n").find("bad.csv:2"), std::string::npos);
  EXPECT_NE(message("a\nx\"y\n").find("unquoted field"), std::string::npos);
}

TEST(Csv, AnyFieldsWrittenReadBackIdentical) {
  // A search over random records from an alphabet of every character CSV treats specially.
  std::mt19937 rng(20261124);
  const std::string alphabet = "ab ,\"\r\n#\t1.";
  for (int trial = 0; trial < 5000; ++trial) {
    std::vector<std::vector<std::string>> records(1 + rng() % 4);
    std::string text;
    for (auto& rec : records) {
      rec.resize(1 + rng() % 4);
      for (auto& f : rec) {
        const int len = rng() % 6;
        for (int k = 0; k < len; ++k) f += alphabet[rng() % alphabet.size()];
        // Unquoted fields lose surrounding spaces and tabs (an extension); csv_field quotes
        // leading/trailing spaces, so only tabs need care: keep them inside.
        while (!f.empty() && f.front() == '\t') f.erase(f.begin());
        while (!f.empty() && f.back() == '\t') f.pop_back();
      }
      // A record of one empty field is an empty line (skipped): RFC 4180 cannot tell them apart.
      if (rec.size() == 1 && rec[0].empty()) rec[0] = "x";
      text += csv_record(rec);
    }
    const auto back = parse_csv(text, "t.csv");
    ASSERT_EQ(back.size(), records.size()) << text;
    for (size_t i = 0; i < records.size(); ++i) ASSERT_EQ(back[i].fields, records[i]) << text;
  }
}
