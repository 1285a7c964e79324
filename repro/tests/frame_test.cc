// The console framing the guest init writes (harness/sigwake/console.py reads it).
#include <gtest/gtest.h>

#include "../guest/frame.h"

namespace sigwake {
namespace {

TEST(Crc32, MatchesTheStandardCheckValue) { EXPECT_EQ(crc32("123456789"), 0xCBF43926u); }

TEST(Framer, NumbersLinesAndCoversThemWithACrc) {
  Framer framer("beef");
  const std::string first = framer.frame("KTAP version 1");
  const std::string second = framer.frame("ok 1 x");
  // The same line is pinned in harness/tests/test_console.py: both sides agree on the format.
  EXPECT_EQ(first, "SIGWAKE beef 0 eeb888af KTAP version 1\n");
  EXPECT_EQ(second.rfind("SIGWAKE beef 1 ", 0), 0u);
}

}  // namespace
}  // namespace sigwake
