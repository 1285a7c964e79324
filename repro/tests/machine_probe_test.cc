// The machine probe the runner prints before the upstream selftests: a breakpoint is present only when it
// counted every write of its variable, and each capability says what the probe saw.
#include "../guest/machine_probe.h"

#include <gtest/gtest.h>

#include <regex>

namespace sigwake {
namespace {

TEST(MachineProbe, NamesWhatTheSelftestsNeedAndWhatItSaw) {
  const std::vector<Capability> found = probe_machine();
  ASSERT_EQ(found.size(), 2u);
  EXPECT_EQ(found[0].name, "breakpoint");
  EXPECT_EQ(found[1].name, "pmu");
  for (const Capability& capability : found) EXPECT_FALSE(capability.detail.empty()) << capability.name;
}

TEST(MachineProbe, ABreakpointIsPresentOnlyWhenItCountedEveryWrite) {
  const Capability breakpoint = probe_machine()[0];
  std::smatch counted;
  if (!std::regex_match(breakpoint.detail, counted, std::regex(R"(counted (\d+) of (\d+) writes)"))) {
    EXPECT_FALSE(breakpoint.present) << breakpoint.detail;  // the event did not open: the reason is said
    return;
  }
  EXPECT_EQ(counted[2], "1000");
  EXPECT_EQ(breakpoint.present, counted[1] == "1000") << breakpoint.detail;
}

}  // namespace
}  // namespace sigwake
