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
  char crc[9];
  std::snprintf(crc, sizeof crc, "%08x", crc32("beef 0 KTAP version 1"));
  EXPECT_EQ(first, std::string("SIGWAKE beef 0 ") + crc + " KTAP version 1\n");
  EXPECT_EQ(second.rfind("SIGWAKE beef 1 ", 0), 0u);
}

}  // namespace
}  // namespace sigwake
