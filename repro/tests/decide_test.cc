// The shared decision names the first effect a kernel failed to produce: a
// kernel that never wakes is a kernel verdict (no-wakeup), not our error.
#include <gtest/gtest.h>

#include "../lib/decide.h"

namespace sigwake {
namespace {

Verdict watermark(const Seen& seen) {
  Report report("case");
  decide_watermark_signal(report, seen, "records");
  return report.verdict();
}

Verdict overflow(const Seen& seen) {
  Report report("case");
  decide_overflow_signal(report, seen);
  return report.verdict();
}

TEST(Decide, WatermarkNamesTheFirstMissingEffect) {
  EXPECT_EQ(watermark({0, false, 0}), Verdict::kNoRecord);
  EXPECT_EQ(watermark({2, false, 0}), Verdict::kNoWakeup);  // records past the watermark, never woken
  EXPECT_EQ(watermark({2, true, 0}), Verdict::kNotDelivered);
  EXPECT_EQ(watermark({2, true, 1}), Verdict::kDelivered);
  // delivered needs the wakeup as well as the signal: a kernel that signals but never marks the fd readable
  // leaves poll() and epoll users asleep
  EXPECT_EQ(watermark({2, false, 1}), Verdict::kNoWakeup);
}

TEST(Decide, AnOverflowCaseMustNotSeeTheOutputWakeup) {
  EXPECT_EQ(overflow({0, false, 1}), Verdict::kNoRecord);
  EXPECT_EQ(overflow({3, false, 1}), Verdict::kDelivered);
  EXPECT_EQ(overflow({3, false, 0}), Verdict::kNotDelivered);
  EXPECT_EQ(overflow({3, true, 1}), Verdict::kMisdelivered);  // the ring woke: the path is not isolated
}

}  // namespace
}  // namespace sigwake
