// plumbing/child_process split_command_line (scheduler.command, --power-command): words as a shell would split them, without a shell.
#include <gtest/gtest.h>

#include "core/input_error.hpp"
#include "plumbing/child_process.hpp"

namespace coinfer {
namespace {

std::vector<std::string> words(const std::string& c) { return split_command_line(c, SourceLocation{"s.yaml", 3, 1}, "scheduler.command"); }

TEST(ExternalScheduler, CommandLineWords) {
  using V = std::vector<std::string>;
  EXPECT_EQ(words("python3 my.py --x 1"), (V{"python3", "my.py", "--x", "1"}));
  EXPECT_EQ(words("  python3\t my.py  "), (V{"python3", "my.py"}));
  // Quotes group; they may start inside a word; nothing inside single quotes is special.
  EXPECT_EQ(words("python3 'my scheduler.py' --name=\"a b\""), (V{"python3", "my scheduler.py", "--name=a b"}));
  EXPECT_EQ(words("echo '$HOME \\n' \"it's\""), (V{"echo", "$HOME \\n", "it's"}));
  // Inside double quotes a backslash escapes " and itself only; outside, any character.
  EXPECT_EQ(words("a \"x\\\"y\\\\z\\q\" b\\ c"), (V{"a", "x\"y\\z\\q", "b c"}));
  EXPECT_EQ(words("''"), (V{""}));  // an empty argument, as a shell gives
  EXPECT_EQ(words("a|b > c; d"), (V{"a|b", ">", "c;", "d"}));  // no shell: these are words
}

TEST(ExternalScheduler, BadCommandLines) {
  for (const std::string c : {"", "   ", "python3 'x", "python3 \"x", "a \"b\\\""}) {
    try {
      words(c);
      FAIL() << c;
    } catch (const InputError& e) {
      EXPECT_EQ(e.key(), "scheduler.command") << c;
      EXPECT_NE(std::string(e.what()).find("s.yaml:3:1"), std::string::npos) << e.what();
    }
  }
}

}  // namespace
}  // namespace coinfer
