// The guest's case loop with a program whose listing never ends: it is cut at the budget and the program runs
// whole, as one run per pass, so a broken --list costs one deadline and hides nothing. And the grants a listing
// asks for.
#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <string>
#include <vector>

#include "../guest/case_loop.h"

namespace sigwake {
namespace {

TEST(CaseLoop, AListingThatHangsIsCutAndTheProgramRunsWhole) {
  char directory[] = "/tmp/sigwake-caseloop-XXXXXX";
  ASSERT_NE(mkdtemp(directory), nullptr);
  const std::string path = std::string(directory) + "/stuck";
  std::ofstream(path) << "#!/bin/sh\n[ \"$1\" = --list ] && exec sleep 60\necho '# verdict=delivered'\nexit 0\n";
  chmod(path.c_str(), 0755);
  LoopConfig config;
  config.programs = {path};
  config.passes = {Pass{"root", -1, ""}};
  config.repeat = 1;
  config.agree = 1;
  config.budget = std::chrono::milliseconds(300);
  std::vector<std::string> lines;
  const auto start = std::chrono::steady_clock::now();
  run_cases(config, PassHooks{}, nullptr, [&lines](const std::string& line) { lines.push_back(line); });
  const auto took = std::chrono::steady_clock::now() - start;
  unlink(path.c_str());
  rmdir(directory);
  EXPECT_LT(took, std::chrono::seconds(30));  // the listing was cut, not waited out
  EXPECT_NE(std::find(lines.begin(), lines.end(), "1..1"), lines.end());
  bool ran_whole = false;
  for (const std::string& line : lines) ran_whole = ran_whole || line.rfind("ok 1 stuck", 0) == 0;
  EXPECT_TRUE(ran_whole);
}

TEST(CaseLoop, ACaseGetsTheGrantsItAsksForOnlyInAReviewedProgram) {
  if (geteuid() != 0) GTEST_SKIP() << "only root has CAP_SYS_ADMIN to give";
  char directory[] = "/tmp/sigwake-caseloop-XXXXXX";
  ASSERT_NE(mkdtemp(directory), nullptr);
  // The same script twice: as a program the runner's list names (a test's prefix before it), and as one it does not.
  const std::string reviewed = std::string(directory) + "/a_provoke", other = std::string(directory) + "/asking";
  for (const std::string& path : {reviewed, other}) {
    std::ofstream(path) << "#!/bin/sh\n[ \"$1\" = --list ] && { echo plain; echo mounting CAP_SYS_ADMIN; exit 0; }\n"
                           "echo \"${0##*/} $2 admin=$(( 0x$(grep CapEff /proc/self/status | cut -f2) >> 21 & 1 ))\"\n";
    chmod(path.c_str(), 0755);
  }
  LoopConfig config;
  config.programs = {reviewed, other};
  config.passes = {Pass{"root", -1, ""}};
  config.budget = std::chrono::milliseconds(5000);
  std::vector<std::string> lines;
  run_cases(config, PassHooks{}, nullptr, [&lines](const std::string& line) { lines.push_back(line); });
  unlink(reviewed.c_str());
  unlink(other.c_str());
  rmdir(directory);
  const auto said = [&lines](const std::string& line) { return std::find(lines.begin(), lines.end(), line) != lines.end(); };
  EXPECT_TRUE(said("    a_provoke plain admin=0"));
  EXPECT_TRUE(said("    a_provoke mounting admin=1"));
  EXPECT_TRUE(said("    asking mounting admin=0"));
  EXPECT_TRUE(said("# sigwake.warning=asking.mounting asks for CAP_SYS_ADMIN, which no case of asking is granted "
                   "(repro/guest/runner.cc): it runs without"));
}

TEST(CaseLoop, OnlyTheNamedCasesRunAndAProgramWithoutCasesByItsName) {
  char directory[] = "/tmp/sigwake-caseloop-XXXXXX";
  ASSERT_NE(mkdtemp(directory), nullptr);
  const std::string listed = std::string(directory) + "/listed", whole = std::string(directory) + "/whole";
  std::ofstream(listed) << "#!/bin/sh\n[ \"$1\" = --list ] && { echo watermark_sigio; echo watermark_poll; echo "
                           "overflow_sigio; exit 0; }\necho \"ran $2\"\n";
  std::ofstream(whole) << "#!/bin/sh\n[ \"$1\" = --list ] && exit 0\necho ran whole\n";
  for (const std::string& path : {listed, whole}) chmod(path.c_str(), 0755);
  const auto ran = [&](std::vector<std::string> globs) {
    LoopConfig config;
    config.programs = {listed, whole};
    config.cases = std::move(globs);
    config.passes = {Pass{"root", -1, ""}};
    config.budget = std::chrono::milliseconds(5000);
    std::vector<std::string> said;
    run_cases(config, PassHooks{}, nullptr, [&said](const std::string& line) {
      if (line.rfind("    ran ", 0) == 0 || line.rfind("1..", 0) == 0) said.push_back(line.substr(line.find_first_not_of(' ')));
    });
    return said;
  };
  EXPECT_EQ(ran({"watermark_sigio", "watermark_poll"}), (std::vector<std::string>{"1..2", "ran watermark_sigio", "ran watermark_poll"}));
  EXPECT_EQ(ran({"overflow_sigio", "whole"}), (std::vector<std::string>{"1..2", "ran overflow_sigio", "ran whole"}));
  EXPECT_EQ(ran({}).size(), 5u);  // no globs: every case
  EXPECT_EQ(ran({"watermark_*"}), (std::vector<std::string>{"1..0"}));  // a name, never a glob
  unlink(listed.c_str());
  unlink(whole.c_str());
  rmdir(directory);
}

TEST(CaseLoop, EachRunAndSelftestSaysTheWallClockAsItStartsOnlyWhenGivenOne) {
  char directory[] = "/tmp/sigwake-caseloop-XXXXXX";
  ASSERT_NE(mkdtemp(directory), nullptr);
  const std::string path = std::string(directory) + "/whole";
  std::ofstream(path) << "#!/bin/sh\n[ \"$1\" = --list ] && exit 0\necho ran\n";
  chmod(path.c_str(), 0755);
  const auto said = [&](bool clock) {
    LoopConfig config;
    config.programs = {path};
    config.peers = {path};
    config.passes = {Pass{"root", -1, ""}};
    config.budget = config.peer_budget = std::chrono::milliseconds(5000);
    if (clock) config.wall_clock = [] { return std::string("1796000012.250000"); };
    std::vector<std::string> lines;
    run_cases(config, PassHooks{}, nullptr, [&lines](const std::string& line) { lines.push_back(line); });
    return lines;
  };
  const std::vector<std::string> clocked = said(true), plain = said(false);
  unlink(path.c_str());
  rmdir(directory);
  const std::string clock_line = "# sigwake.clock_start=1796000012.250000";
  EXPECT_EQ(std::count(clocked.begin(), clocked.end(), clock_line), 2);  // the case's run and the selftest's
  const auto start = std::find(clocked.begin(), clocked.end(), "# sigwake.start=whole");
  ASSERT_NE(start, clocked.end());
  EXPECT_EQ(*(start + 1), clock_line);  // said before the program's own lines
  EXPECT_EQ(std::count_if(plain.begin(), plain.end(),
                          [](const std::string& line) { return line.rfind("# sigwake.clock_start=", 0) == 0; }),
            0);
  // and each run's CPU time, whatever the clock: the case's and the selftest's
  EXPECT_EQ(std::count_if(plain.begin(), plain.end(),
                          [](const std::string& line) { return line.rfind("# sigwake.cpu_us=", 0) == 0; }),
            2);
}

TEST(CaseLoop, ARunsCpuTimeIsWhatItsProcessesRanNotWhatTheyWaited) {
  char directory[] = "/tmp/sigwake-caseloop-XXXXXX";
  ASSERT_NE(mkdtemp(directory), nullptr);
  const std::string path = std::string(directory) + "/busy";
  // a child that does a fixed amount of work (about 0.3 s of CPU here, however loaded the machine) and is
  // reaped by the program, then 0.3 s asleep
  std::ofstream(path) << "#!/bin/sh\n[ \"$1\" = --list ] && exit 0\n"
                         "sh -c 'i=0; while [ $i -lt 300000 ]; do i=$((i+1)); done'\nsleep 0.3\necho done\n";
  chmod(path.c_str(), 0755);
  LoopConfig config;
  config.programs = {path};
  config.passes = {Pass{"root", -1, ""}};
  config.budget = std::chrono::milliseconds(10000);
  std::vector<std::string> lines;
  run_cases(config, PassHooks{}, nullptr, [&lines](const std::string& line) { lines.push_back(line); });
  unlink(path.c_str());
  rmdir(directory);
  const auto value = [&lines](const std::string& key) {
    for (const std::string& line : lines) {
      if (line.rfind(key, 0) == 0) return std::stoll(line.substr(key.size()));
    }
    return -1LL;
  };
  const long long cpu = value("# sigwake.cpu_us="), wall = value("# sigwake.duration_us=");
  EXPECT_GE(cpu, 50'000);  // the working grandchild's, counted once the program reaped it
  EXPECT_LE(cpu, wall - 300'000);  // the sleep is not: its 0.3 s of wall time are on top of the work's
}

}  // namespace
}  // namespace sigwake
