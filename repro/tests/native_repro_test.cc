// Every reproducer, run natively on the host kernel as a separate program.
// Which verdict watermark_sigio should reach depends on the kernel: that table
// lives once, in harness/sigwake/expectations.py, and pytest checks it against
// the host. Here: each program reaches a kernel verdict (never `error`), prints
// well-formed KTAP, exits with the matching kselftest code, and backs its
// verdict with evidence; the controls are delivered on every kernel.
#include <gtest/gtest.h>
#include <signal.h>

#include <chrono>
#include <cstdlib>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "../guest/runner.h"

namespace sigwake {
namespace {

using namespace std::chrono_literals;

struct Ktap {
  std::map<std::string, std::string> diagnostics;
  std::string result_line;
  bool has_header = false, has_plan = false;
};

Ktap parse(const std::string& output) {
  Ktap ktap;
  std::istringstream lines(output);
  for (std::string line; std::getline(lines, line);) {
    if (line == "KTAP version 1") ktap.has_header = true;
    else if (line == "1..1") ktap.has_plan = true;
    else if (line.rfind("# ", 0) == 0 && line.find('=') != std::string::npos) {
      const auto eq = line.find('=');
      ktap.diagnostics[line.substr(2, eq - 2)] = line.substr(eq + 1);
    } else if (line.rfind("ok ", 0) == 0 || line.rfind("not ok ", 0) == 0) {
      ktap.result_line = line;
    }
  }
  return ktap;
}

std::string from_env(const char* variable) {
  const char* value = std::getenv(variable);
  if (value == nullptr) ADD_FAILURE() << variable << " is not set (run through meson test)";
  return value ? value : "";
}

// Runs build/repro/<name>, under `wrapper` when one is given.
Ktap run_native(const std::string& name, int* exit_code, const std::string& wrapper = "") {
  std::vector<std::string> argv{from_env("SIGWAKE_REPRO_DIR") + "/" + name};
  if (!wrapper.empty()) argv.insert(argv.begin(), wrapper);
  const RunOutcome run = run_with_deadline(argv, 10s);
  EXPECT_TRUE(run.exited) << name << " did not exit (timed out: " << run.timed_out << ")";
  *exit_code = run.exit_code;
  const Ktap ktap = parse(run.output);
  EXPECT_TRUE(ktap.has_header) << run.output;
  EXPECT_TRUE(ktap.has_plan) << run.output;
  EXPECT_NE(ktap.result_line.find(name), std::string::npos) << run.output;
  return ktap;
}

int expected_exit(const std::string& verdict) {
  if (verdict == "delivered") return 0;
  if (verdict == "unsupported") return 4;
  return 1;
}

TEST(NativeRepro, WatermarkSigioReachesAKernelVerdictWithEvidence) {
  int code = -1;
  Ktap ktap = run_native("watermark_sigio", &code);
  const std::string verdict = ktap.diagnostics["verdict"];
  ASSERT_TRUE(verdict == "delivered" || verdict == "not-delivered")
      << "verdict=" << verdict << " reason=" << ktap.diagnostics["reason"];
  EXPECT_EQ(code, expected_exit(verdict));
  EXPECT_EQ(ktap.diagnostics["pollin"], "1");
  EXPECT_NE(ktap.diagnostics["record_types"].find("SWITCH"), std::string::npos);
  if (verdict == "delivered") {
    EXPECT_GE(std::stoi(ktap.diagnostics["signals"]), 1);
    EXPECT_EQ(ktap.diagnostics["si_signo"], std::to_string(SIGIO));
    EXPECT_EQ(ktap.diagnostics["si_code"], std::to_string(POLL_IN));
  } else {
    EXPECT_EQ(ktap.diagnostics["signals"], "0");
  }
}

TEST(NativeRepro, WatermarkPollIsWoken) {
  int code = -1;
  Ktap ktap = run_native("watermark_poll", &code);
  EXPECT_EQ(ktap.diagnostics["verdict"], "delivered") << ktap.diagnostics["reason"];
  EXPECT_EQ(code, 0);
  EXPECT_EQ(ktap.diagnostics["pollin"], "1");
  EXPECT_NE(ktap.diagnostics["record_types"].find("SWITCH"), std::string::npos);
}

TEST(NativeRepro, OverflowSigioIsDelivered) {
  int code = -1;
  Ktap ktap = run_native("overflow_sigio", &code);
  EXPECT_EQ(ktap.diagnostics["verdict"], "delivered") << ktap.diagnostics["reason"];
  EXPECT_EQ(code, 0);
  EXPECT_NE(ktap.diagnostics["record_types"].find("SAMPLE"), std::string::npos);
  EXPECT_EQ(ktap.diagnostics["si_signo"], std::to_string(SIGIO));
}

}  // namespace
}  // namespace sigwake

namespace sigwake {
namespace {

// A kernel without perf events (perf_event_open: ENOSYS) is unsupported, not a failure.
class WithoutPerf : public ::testing::TestWithParam<const char*> {};

TEST_P(WithoutPerf, IsReportedAsUnsupportedWithTheReason) {
  int code = -1;
  Ktap ktap = run_native(GetParam(), &code, from_env("SIGWAKE_NOPERF"));
  EXPECT_EQ(ktap.diagnostics["verdict"], "unsupported");
  EXPECT_EQ(code, 4);
  EXPECT_NE(ktap.diagnostics["reason"].find("ENOSYS"), std::string::npos) << ktap.diagnostics["reason"];
  EXPECT_NE(ktap.diagnostics["reason"].find("CONFIG_PERF_EVENTS"), std::string::npos);
  EXPECT_NE(ktap.result_line.find("# SKIP"), std::string::npos) << ktap.result_line;
}

INSTANTIATE_TEST_SUITE_P(EveryReproducer, WithoutPerf,
                         ::testing::Values("watermark_sigio", "watermark_poll", "overflow_sigio"));

}  // namespace
}  // namespace sigwake
