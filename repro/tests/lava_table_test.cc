// The guest's lookup of what a LAVA lab shows for each run (the table comes from
// harness/sigwake/judge/lava_results.py), and the case loop saying it.
#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <string>
#include <vector>

#include "../guest/case_loop.h"
#include "../guest/lava_table.h"

namespace sigwake {
namespace {

constexpr const char* kTable =
    "0.0 root watermark_sigio.watermark_sigio not-delivered:pass unsupported:skip\n"
    "0.0 root * delivered:pass unsupported:skip\n"
    "6.10 root watermark_sigio.watermark_sigio delivered:pass unsupported:skip\n"
    "0.0 user-paranoid3 * unsupported:pass\n";  // Debian's refusal there is known

TEST(LavaTable, AKernelBeforeTheFixPassesItsKnownFailure) {
  const LavaTable table = LavaTable::parse(kTable, "6.1.0-57-amd64");
  EXPECT_EQ(table.result("root", "watermark_sigio.watermark_sigio", "not-delivered"), "pass");
  EXPECT_EQ(table.result("root", "watermark_sigio.watermark_sigio", "delivered"), "fail");  // an unexpected fix
  EXPECT_EQ(table.result("root", "watermark_sigio.watermark_sigio", "unsupported"), "skip");
}

TEST(LavaTable, TheRowOfTheGreatestReleaseNotAboveTheKernelsDecides) {
  for (const char* release : {"6.10.0", "6.12.118+deb13-amd64", "7.2.13"}) {
    const LavaTable table = LavaTable::parse(kTable, release);
    EXPECT_EQ(table.result("root", "watermark_sigio.watermark_sigio", "delivered"), "pass") << release;
    EXPECT_EQ(table.result("root", "watermark_sigio.watermark_sigio", "not-delivered"), "fail") << release;
  }
  EXPECT_EQ(LavaTable::parse(kTable, "6.9.12").result("root", "watermark_sigio.watermark_sigio", "delivered"), "fail");
}

TEST(LavaTable, AnUnnamedCaseIsLookedUpAsAnyCase) {
  const LavaTable table = LavaTable::parse(kTable, "6.1.0");
  EXPECT_EQ(table.result("root", "other.other", "delivered"), "pass");
  EXPECT_EQ(table.result("root", "other.other", "not-delivered"), "fail");
  EXPECT_EQ(table.result("user-paranoid3", "other.other", "unsupported"), "pass");
  EXPECT_EQ(table.result("user-paranoid1", "other.other", "delivered"), "fail");  // no row for the pass at all
}

TEST(LavaTable, NoVerdictAndAnErrorFail) {
  const LavaTable table = LavaTable::parse(kTable, "6.1.0");
  EXPECT_EQ(table.result("root", "watermark_sigio.watermark_sigio", ""), "fail");  // timed out, killed
  EXPECT_EQ(table.result("root", "watermark_sigio.watermark_sigio", "error"), "fail");
}

TEST(LavaTable, NoTableIsEmpty) {
  EXPECT_TRUE(LavaTable::parse("", "6.1.0").empty());
  EXPECT_FALSE(LavaTable::parse(kTable, "6.1.0").empty());
}

// A stand-in program: one case that prints `verdict` and exits as a reproducer would.
std::string stand_in(const std::string& directory, const std::string& verdict, int exit_code, bool daemon) {
  const std::string path = directory + "/standin";
  std::ofstream(path) << "#!/bin/sh\n[ \"$1\" = --list ] && { echo only; exit 0; }\n"
                      << (daemon ? "setsid sleep 60 >/dev/null 2>&1 &\n" : "")
                      << "echo '# verdict=" << verdict << "'\nexit " << exit_code << "\n";
  chmod(path.c_str(), 0755);
  return path;
}

std::vector<std::string> lava_lines(const std::string& verdict, int exit_code, long long repeat, long long agree,
                                    bool daemon = false) {
  char directory[] = "/tmp/sigwake-lava-XXXXXX";
  EXPECT_NE(mkdtemp(directory), nullptr);
  LoopConfig config;
  config.programs = {stand_in(directory, verdict, exit_code, daemon)};
  config.passes = {Pass{"root", -1, ""}};
  config.repeat = repeat;
  config.agree = agree;
  config.budget = std::chrono::seconds(10);
  config.lava = LavaTable::parse("0.0 root standin.only not-delivered:pass unsupported:skip\n", "6.1.0");
  std::vector<std::string> found;
  run_cases(config, PassHooks{}, nullptr, [&found](const std::string& line) {
    if (line.rfind("# sigwake.lava=", 0) == 0) found.push_back(line);
  });
  unlink((std::string(directory) + "/standin").c_str());
  rmdir(directory);
  return found;
}

TEST(CaseLoopLava, EachRunIsSaidWithItsPassAndRun) {
  EXPECT_EQ(lava_lines("not-delivered", 1, 3, 2),
            (std::vector<std::string>{"# sigwake.lava=pass standin.only [root run 1]",
                                      "# sigwake.lava=pass standin.only [root run 2]",
                                      "# sigwake.lava=skip standin.only [root run 3]"}));  // not needed: 2 agreed
  EXPECT_EQ(lava_lines("delivered", 0, 1, 1), (std::vector<std::string>{"# sigwake.lava=fail standin.only [root run 1]"}));
}

TEST(CaseLoopLava, AVerdictItsExitCodeContradictsFails) {
  // not-delivered exits 1 (repro/protocol.json): exiting 0 with it is the reproducer's error, as the harness reads it.
  EXPECT_EQ(lava_lines("not-delivered", 0, 1, 1),
            (std::vector<std::string>{"# sigwake.lava=fail standin.only [root run 1]"}));
}

TEST(CaseLoopLava, ARunThatLeftADaemonRunningFails) {
  // The harness counts such a run for nothing (its daemon could act for it); the lab must not show it passed.
  EXPECT_EQ(lava_lines("not-delivered", 1, 1, 1, true),
            (std::vector<std::string>{"# sigwake.lava=fail standin.only [root run 1]"}));
}

TEST(CaseLoopLava, NoTableNoLines) {
  LoopConfig config;
  config.passes = {Pass{"root", -1, ""}};
  config.budget = std::chrono::seconds(10);
  bool said = false;
  run_cases(config, PassHooks{}, nullptr, [&said](const std::string& line) {
    said = said || line.rfind("# sigwake.lava=", 0) == 0;
  });
  EXPECT_FALSE(said);
}

}  // namespace
}  // namespace sigwake
