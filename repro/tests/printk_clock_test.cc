// The console lines a kernel record continues, read off /dev/kmsg's escaped form.
#include "guest/printk_clock.h"

#include <gtest/gtest.h>

namespace sigwake {
namespace {

TEST(ContinuedLines, ARecordOfOneLineContinuesNone) {
  EXPECT_TRUE(continued_lines("4,812,5960677,-;process 'forge' launched '/tmp/x' with NULL argv\n", "5.960677").empty());
}

TEST(ContinuedLines, EachLineAfterAnEscapedNewlineIsSaidWithTheRecordsTime) {
  // A path with newlines, printed by the kernel in one record: the lines after the first are what a console
  // shows on lines of their own, each behind the record's timestamp.
  const std::string record =
      "4,813,5960677,-;process 'forge' launched '/tmp/a\\x0aWARNING: CPU: 0 PID: 1 at forged_exec+0x1/0x2\\x0a'"
      " with NULL argv: empty string added\n SUBSYSTEM=x\\x0ay\n";
  EXPECT_EQ(continued_lines(record, "5.960677"),
            (std::vector<std::string>{"5.960677 WARNING: CPU: 0 PID: 1 at forged_exec+0x1/0x2",
                                      "5.960677 ' with NULL argv: empty string added"}));
}

TEST(ContinuedLines, AnEmptyLineAndAnUnreadableRecordContinueNothing) {
  EXPECT_TRUE(continued_lines("6,9,100,-;ends in a newline\\x0a\n", "0.000100").empty());
  EXPECT_TRUE(continued_lines("no semicolon\\x0aWARNING: x", "0.000100").empty());
}

}  // namespace
}  // namespace sigwake
