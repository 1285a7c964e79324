// The guest's case loop with a program whose listing never ends: it is cut at the budget and the program runs
// whole, as one run per pass, so a broken --list costs one deadline and hides nothing.
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

}  // namespace
}  // namespace sigwake
