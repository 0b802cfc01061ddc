#include <gtest/gtest.h>

#include "core/strategy.hpp"
#include "core/text_util.hpp"

using namespace coinfer;

TEST(TextUtil, EditDistanceCountsSingleEdits) {
  EXPECT_EQ(edit_distance("kitten", "sitting"), 3);  // k->s, e->i, +g
  EXPECT_EQ(edit_distance("", "abc"), 3);
  EXPECT_EQ(edit_distance("same", "same"), 0);
}

TEST(TextUtil, NearestWordSuggestsCloseKeysOnly) {
  EXPECT_EQ(nearest_word("duration", {"duration_s", "warmup_s", "seed"}), "duration_s");
  EXPECT_EQ(nearest_word("bandwith_mbps", {"bandwidth_mbps", "latency_ms"}), "bandwidth_mbps");
  EXPECT_EQ(nearest_word("zzzzzz", {"seed", "name"}), "");
}

TEST(TextUtil, FormatDoubleRoundTrips) {
  EXPECT_EQ(format_double(0.1), "0.1");
  EXPECT_EQ(format_double(52.1), "52.1");
  EXPECT_EQ(format_double(1e-5), "1e-05");
  // No exponent where plain decimals are short: %g alone gives "6e+01", "1e+05", "6e-04".
  EXPECT_EQ(format_double(60), "60");
  EXPECT_EQ(format_double(100000), "100000");
  EXPECT_EQ(format_double(0.0006), "0.0006");
  EXPECT_EQ(format_double(1e20), "1e+20");
  EXPECT_EQ(format_double(-250), "-250");
}

TEST(Strategy, ParsesEveryFormAndRejectsOthers) {
  EXPECT_EQ(parse_strategy("local"), Strategy::local());
  EXPECT_EQ(parse_strategy("offload"), Strategy::offload());
  EXPECT_EQ(parse_strategy("pp(3)"), Strategy::pp(3));
  EXPECT_EQ(parse_strategy("data_parallel"), Strategy::data_parallel());
  EXPECT_EQ(parse_strategy("pp(12)").to_string(), "pp(12)");
  for (const char* bad : {"pp()", "pp(x)", "pp(-1)", "dp", "PP(2)", "pp(2", "local "})
    EXPECT_THROW(parse_strategy(bad), std::invalid_argument) << bad;
  EXPECT_EQ(Strategy::pp(4).device_split(9), 4);
  EXPECT_EQ(Strategy::local().device_split(9), 9);
  EXPECT_EQ(Strategy::offload().device_split(9), 0);
}

TEST(Strategy, ACloudPartIsASecondSplitAfterTheFirst) {
  // pp(2,5): device [0,2), edge [2,5), cloud [5,n). It is not pp(2) (another end at the edge).
  const Strategy s = parse_strategy("pp(2,5)");
  EXPECT_EQ(s, Strategy::pp(2, 5));
  EXPECT_NE(s, Strategy::pp(2));
  EXPECT_TRUE(s.has_cloud_part());
  EXPECT_FALSE(Strategy::pp(2).has_cloud_part());
  EXPECT_EQ(s.device_split(9), 2);
  EXPECT_EQ(s.server_end(9), 5);
  EXPECT_EQ(Strategy::pp(2).server_end(9), 9);
  EXPECT_EQ(s.to_string(), "pp(2,5)");
  EXPECT_EQ(parse_strategy("pp(0,1)").to_string(), "pp(0,1)");  // the raw input to the edge, [1,n) on the cloud
  EXPECT_EQ(parse_strategy("pp(1,3)@int8").to_string(), "pp(1,3)@int8");
  // The cloud's part starts after the edge's: K < M.
  for (const char* bad : {"pp(3,3)", "pp(4,2)", "pp(2,)", "pp(,2)", "pp(2,x)", "pp(1,2,3)", "pp(2 ,3)"})
    EXPECT_THROW(parse_strategy(bad), std::invalid_argument) << bad;
}

namespace coinfer {
namespace {
TEST(TextUtil, TrimLowerPrintf) {
  EXPECT_EQ(trim(" \t a b \t"), "a b");
  EXPECT_EQ(trim(" \t "), "");
  EXPECT_EQ(to_lower("DeBuG-1"), "debug-1");
  EXPECT_EQ(strprintf("%d points, %.1f s, %s", 12, 2.25, "ok"), "12 points, 2.2 s, ok");
  EXPECT_EQ(strprintf("%s", ""), "");
  const std::string long_text(5000, 'x');
  EXPECT_EQ(strprintf("[%s]", long_text.c_str()), "[" + long_text + "]");  // longer than any fixed buffer
}
}  // namespace
}  // namespace coinfer
