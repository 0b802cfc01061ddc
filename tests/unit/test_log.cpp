// core/log: the prefixes, the levels per category, and the checks of a level specification.
#include <gtest/gtest.h>

#include <cstdlib>

#include "core/input_error.hpp"
#include "core/log.hpp"

namespace coinfer {
namespace {

std::string logged(const std::function<void()>& f) {
  testing::internal::CaptureStderr();
  f();
  return testing::internal::GetCapturedStderr();
}

class Log : public testing::Test {
 protected:
  void SetUp() override {
    ::unsetenv("COINFER_LOG");
    log::set_levels("info", "test");
  }
  void TearDown() override {
    ::unsetenv("COINFER_LOG");
    log::set_levels("info", "test");
  }
};

TEST_F(Log, PrefixesByLevel) {
  EXPECT_EQ(logged([] { log::info("sweep", "12 points"); }), "[sweep] 12 points\n");
  EXPECT_EQ(logged([] { log::warn("sweep", "point 3 failed"); }), "warning: point 3 failed\n");
  EXPECT_EQ(logged([] { log::error("run", "bad"); }), "error: bad\n");
  // info is the default: debug is dropped.
  EXPECT_EQ(logged([] { log::debug("data", "models: /x"); }), "");
}

TEST_F(Log, LevelsPerCategory) {
  log::set_levels("warn,sweep=debug", "test");
  EXPECT_EQ(logged([] { log::info("run", "hidden"); }), "");
  EXPECT_EQ(logged([] { log::debug("sweep", "shown"); }), "[sweep] shown\n");
  EXPECT_EQ(logged([] { log::warn("run", "shown"); }), "warning: shown\n");
  EXPECT_FALSE(log::enabled(log::Level::info, "run"));
  EXPECT_TRUE(log::enabled(log::Level::info, "sweep"));
  log::set_levels("off", "test");
  EXPECT_EQ(logged([] { log::error("run", "hidden"); }), "");
}

TEST_F(Log, BadSpecificationsAreInputErrors) {
  // spdlog alone would ignore both silently.
  try {
    log::set_levels("sweeep=debug", "$COINFER_LOG");
    FAIL();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("$COINFER_LOG: no log category 'sweeep'; did you mean 'sweep'?"), std::string::npos) << e.what();
  }
  EXPECT_THROW(log::set_levels("loud", "x"), InputError);
  EXPECT_THROW(log::set_levels("run=loud", "x"), InputError);
  EXPECT_THROW(log::set_levels(std::string(600, 'a'), "x"), InputError);
  // A rejected specification changes nothing.
  EXPECT_TRUE(log::enabled(log::Level::info, "run"));
  EXPECT_FALSE(log::enabled(log::Level::debug, "run"));
}

TEST_F(Log, FlagsWinOverTheEnvironmentAndReachChildren) {
  ::setenv("COINFER_LOG", "error", 1);
  log::set_from_flags(1, false);  // -v
  EXPECT_TRUE(log::enabled(log::Level::debug, "validate"));
  EXPECT_STREQ(std::getenv("COINFER_LOG"), "debug");
  log::set_from_flags(0, true);  // -q
  EXPECT_FALSE(log::enabled(log::Level::info, "run"));
  EXPECT_TRUE(log::enabled(log::Level::warn, "run"));
  EXPECT_STREQ(std::getenv("COINFER_LOG"), "warn");
  EXPECT_THROW(log::set_from_flags(1, true), InputError);
  ::setenv("COINFER_LOG", "run=debug", 1);
  log::set_from_flags(0, false);  // no flag: the environment alone
  EXPECT_TRUE(log::enabled(log::Level::debug, "run"));
}

}  // namespace
}  // namespace coinfer
