// Every reproducer, run natively on the host kernel as a separate program.
// Which verdict a signal case should reach depends on the kernel: that table
// lives once, in harness/sigwake/expectations.py, and pytest checks it against
// the host. Here: each program prints well-formed KTAP, every case reaches a
// kernel verdict (never `error`) backed by its evidence, the exit code matches,
// and the cases whose behaviour is the same on every kernel behave so.
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "../guest/runner.h"
#include "protocol.h"

namespace sigwake {
namespace {

using namespace std::chrono_literals;

struct Case {
  std::map<std::string, std::string> diagnostics;
  std::string result_line;
  std::string verdict() const { return diagnostics.count("verdict") ? diagnostics.at("verdict") : "(none)"; }
  std::string get(const std::string& key) const { return diagnostics.count(key) ? diagnostics.at(key) : ""; }
};

struct Program {
  std::map<std::string, Case> cases;
  std::vector<std::string> order;
  int planned = -1;
  int exit_code = -1;
  std::string output;
};

std::string from_env(const char* variable) {
  const char* value = std::getenv(variable);
  if (value == nullptr) ADD_FAILURE() << variable << " is not set (run through meson test)";
  return value ? value : "";
}

// Runs build/repro/<name>, under `wrapper` when one is given, and reads its KTAP.
Program run_native(const std::string& name, const std::string& wrapper = "") {
  std::vector<std::string> argv{from_env("SIGWAKE_REPRO_DIR") + "/" + name};
  if (!wrapper.empty()) argv.insert(argv.begin(), wrapper);
  const RunOutcome run = run_with_deadline(argv, 20s);
  EXPECT_TRUE(run.exited) << name << " did not exit (timed out: " << run.timed_out << ")";
  Program program;
  program.exit_code = run.exit_code;
  program.output = run.output;
  std::istringstream lines(run.output);
  std::string first;
  std::getline(lines, first);
  EXPECT_EQ(first, "KTAP version 1") << run.output;
  Case pending;
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind("1..", 0) == 0) {
      program.planned = std::stoi(line.substr(3));
    } else if (line.rfind("# ", 0) == 0 && line.find('=') != std::string::npos) {
      const auto eq = line.find('=');
      pending.diagnostics[line.substr(2, eq - 2)] = line.substr(eq + 1);
    } else if (line.rfind("ok ", 0) == 0 || line.rfind("not ok ", 0) == 0) {
      std::istringstream words(line.substr(line.rfind("not ", 0) == 0 ? 7 : 3));
      std::string number, case_name;
      words >> number >> case_name;
      pending.result_line = line;
      program.order.push_back(case_name);
      program.cases[case_name] = pending;
      pending = Case{};
    }
  }
  EXPECT_EQ(program.planned, static_cast<int>(program.order.size())) << run.output;
  return program;
}

std::vector<std::string> reproducers() {
  std::vector<std::string> names;
  std::istringstream list(from_env("SIGWAKE_REPRODUCERS"));
  for (std::string name; std::getline(list, name, ',');) names.push_back(name);
  return names;
}

class EveryReproducer : public ::testing::TestWithParam<std::string> {};

TEST_P(EveryReproducer, EachCaseReachesAKernelVerdictAndTheExitCodeAgrees) {
  const Program program = run_native(GetParam());
  ASSERT_FALSE(program.order.empty()) << program.output;
  bool any_failed = false, all_skipped = true;
  for (const auto& [name, c] : program.cases) {
    const std::string verdict = c.verdict();
    EXPECT_TRUE(verdict == "delivered" || verdict == "not-delivered" || verdict == "misdelivered" ||
                verdict == "no-wakeup" || verdict == "no-record" || verdict == "unsupported" ||
                verdict == "measured" || verdict == "wrong-count")
        << name << ": verdict=" << verdict << " reason=" << c.get("reason");
    const bool ok = verdict == "delivered" || verdict == "unsupported" || verdict == "measured";
    EXPECT_EQ(c.result_line.rfind(ok ? "ok " : "not ok ", 0), 0u) << c.result_line;
    any_failed = any_failed || !ok;
    all_skipped = all_skipped && verdict == "unsupported";
  }
  EXPECT_EQ(program.exit_code, any_failed ? 1 : all_skipped ? 4 : 0);
}

// Without perf events (perf_event_open: ENOSYS) every case is unsupported, not a failure.
TEST_P(EveryReproducer, WithoutPerfEveryCaseIsUnsupportedWithTheReason) {
  const Program program = run_native(GetParam(), from_env("SIGWAKE_NOPERF"));
  ASSERT_FALSE(program.order.empty()) << program.output;
  for (const auto& [name, c] : program.cases) {
    EXPECT_EQ(c.verdict(), "unsupported") << name;
    EXPECT_NE(c.get("reason").find("ENOSYS"), std::string::npos) << c.get("reason");
    EXPECT_NE(c.get("reason").find("CONFIG_PERF_EVENTS"), std::string::npos);
    EXPECT_NE(c.result_line.find("# SKIP"), std::string::npos) << c.result_line;
  }
  EXPECT_EQ(program.exit_code, 4);
}

INSTANTIATE_TEST_SUITE_P(Native, EveryReproducer, ::testing::ValuesIn(reproducers()),
                         [](const auto& info) { return info.param; });

TEST(NativeRepro, WatermarkSigioBacksItsVerdictWithEvidence) {
  const Case c = run_native("watermark_sigio").cases["watermark_sigio"];
  EXPECT_EQ(c.get("pollin"), "1");
  EXPECT_NE(c.get("record_types").find("SWITCH"), std::string::npos);
  if (c.verdict() == "delivered") {
    EXPECT_GE(std::stoi(c.get("signals")), 1);
    EXPECT_EQ(c.get("si_signo"), std::to_string(SIGIO));
    EXPECT_EQ(c.get("si_code"), std::to_string(POLL_IN));
  } else {
    EXPECT_EQ(c.get("signals"), "0");
  }
}

// Sample overflows have raised signals on every kernel: these are delivered
// anywhere, and with the ring never reaching its watermark poll() stays quiet:
// the overflow path alone signalled.
TEST(NativeRepro, OverflowPathsAreDeliveredWithTheirEvidence) {
  const Program overflow = run_native("overflow_sigio");
  EXPECT_EQ(overflow.cases.at("overflow_sigio").verdict(), "delivered");
  EXPECT_NE(overflow.cases.at("overflow_sigio").get("record_types").find("SAMPLE"), std::string::npos);
  EXPECT_EQ(overflow.cases.at("overflow_sigio").get("pollin"), "0");

  const Case tid = run_native("setown_ex_tid").cases["setown_ex_tid_overflow"];
  EXPECT_EQ(tid.verdict(), "delivered") << tid.get("reason");
  EXPECT_EQ(tid.get("signal_tid"), tid.get("owner_tid"));
  EXPECT_NE(tid.get("signal_tid"), tid.get("decoy_tid"));
  EXPECT_EQ(tid.get("pollin"), "0");

  const Case info = run_native("setsig_siginfo").cases["setsig_siginfo_overflow"];
  EXPECT_EQ(info.verdict(), "delivered") << info.get("reason");
  EXPECT_EQ(info.get("si_signo"), std::to_string(SIGRTMIN + 2));
  EXPECT_EQ(info.get("deliveries_with_wrong_siginfo"), "0");
  EXPECT_EQ(info.get("queued"), "1");  // several samples, several real-time signals

  const Case inherited = run_native("inherit_wakeup").cases["inherit_wakeup_overflow"];
  EXPECT_EQ(inherited.verdict(), "delivered") << inherited.get("reason");
  EXPECT_NE(inherited.get("records_from_the_writer"), "0");
  EXPECT_EQ(inherited.get("records_from_the_task"), "0");
  EXPECT_EQ(inherited.get("pollin"), "0");
}

// rr's probe, step for step: the default signal path (no F_SETSIG) sends plain SIGIO, SI_KERNEL.
TEST(NativeRepro, MmapRecordSigioTakesTheDefaultSignalPath) {
  const Case c = run_native("mmap_record_sigio").cases["mmap_record_sigio"];
  EXPECT_EQ(c.get("mmap_records_of_our_page"), "1");
  if (c.verdict() == "delivered") {
    EXPECT_EQ(c.get("signals_by_disable"), "1");
    EXPECT_EQ(c.get("si_signo"), std::to_string(SIGIO));
    EXPECT_EQ(c.get("si_code"), std::to_string(SI_KERNEL));
  }
}

TEST(NativeRepro, InheritedWatermarkRecordsComeFromTheWriterAlone) {
  const Case c = run_native("inherit_wakeup").cases["inherit_wakeup_watermark"];
  EXPECT_EQ(c.get("records_from_the_writer"), "1") << c.get("record_types");
  EXPECT_EQ(c.get("records_from_the_task"), "0");
  EXPECT_EQ(c.get("records_by_the_parent_event"), "0");  // an inherited child wrote it, not the event we opened
  EXPECT_EQ(c.get("record_types"), "MMAP");  // no FORK record: the event was disabled across the fork
}

TEST(NativeRepro, SetsigOverflowStopsNearItsThreeSamplesAndCatchesAFallback) {
  // Bounded like the other overflow cases, so no burst overflows the real-time queue into plain SIGIO.
  const Case c = run_native("setsig_siginfo").cases["setsig_siginfo_overflow"];
  EXPECT_EQ(c.verdict(), "delivered") << c.get("reason");
  EXPECT_GE(std::stoi(c.get("records")), 3);
  EXPECT_LE(std::stoi(c.get("records")), 8) << "the sampling loop overran";
  EXPECT_EQ(c.get("fallback_sigio"), "0");
}

TEST(NativeRepro, WatermarkPollIsWoken) {
  const Case c = run_native("watermark_poll").cases["watermark_poll"];
  EXPECT_EQ(c.verdict(), "delivered") << c.get("reason");
  EXPECT_EQ(c.get("pollin"), "1");
}

TEST(NativeRepro, WakeupEventsCountsNoNonSampleRecords) {
  const Case c = run_native("wakeup_events_nonsample").cases["wakeup_events_nonsample"];
  EXPECT_EQ(c.verdict(), "no-wakeup") << c.get("reason");
  EXPECT_NE(c.get("records"), "0");
}

TEST(NativeRepro, BpfOutputRecordsCarryTheMarkerAndReachPerfBuffer) {
  const Program program = run_native("bpf_output_sigio");
  const Case sigio = program.cases.at("bpf_output_sigio");
  ASSERT_NE(sigio.verdict(), "unsupported") << sigio.get("reason");
  EXPECT_EQ(sigio.get("records_with_marker"), "1");
  EXPECT_EQ(sigio.get("pollin"), "1");
  const Case counted = program.cases.at("bpf_output_wakeup_events");
  EXPECT_EQ(counted.get("records_with_marker"), "1");
  EXPECT_EQ(counted.get("pollin"), "1");
  const Case control = program.cases.at("bpf_output_perf_buffer");
  EXPECT_EQ(control.verdict(), "delivered") << control.get("reason");
  EXPECT_EQ(control.get("records_with_marker"), "1");
}

// The host runner (sigwake-run): the same framed KTAP as a guest, and as root one
// kernel-path line per function on the chain, each a count or why it is unavailable.
TEST(NativeRepro, HostRunnerFramesItsReportAndTracesTheKernelPath) {
  const std::vector<std::string> argv{from_env("SIGWAKE_RUNNER"), "--repeat", "1", "--passes", "root",
                                      from_env("SIGWAKE_REPRO_DIR") + "/watermark_sigio"};
  const RunOutcome run = run_with_deadline(argv, 20s);  // stdin is empty: the token is "unset"
  ASSERT_TRUE(run.exited && run.exit_code == 0) << run.output;
  std::map<std::string, std::string> path;
  std::istringstream lines(run.output);
  int frames = 0;
  for (std::string line; std::getline(lines, line);) {
    ASSERT_EQ(line.rfind("SIGWAKE unset ", 0), 0u) << line;  // every line framed
    ++frames;
    const std::string key = std::string("# ") + protocol::kReportKernelPath;
    const auto at = line.find(key);
    if (at == std::string::npos) continue;
    const auto eq = line.find('=', at);
    path[line.substr(at + key.size(), eq - at - key.size())] = line.substr(eq + 1);
  }
  EXPECT_GT(frames, 10);
  if (geteuid() != 0) GTEST_SKIP() << "the kernel-path tracer loads BPF: root only";
  for (const char* function : {"perf_output_wakeup", "perf_event_wakeup", "kill_fasync", "send_sigio"}) {
    ASSERT_TRUE(path.count(function)) << function << "\n" << run.output;
    const std::string& value = path[function];
    EXPECT_TRUE(value.rfind("unavailable: ", 0) == 0 || value.find_first_not_of("0123456789") == std::string::npos)
        << function << "=" << value;
  }
  EXPECT_TRUE(path.count("perf_pending_irq") + path.count("perf_pending_event") == 1) << run.output;
}

// Root too is limited: it drops CAP_IPC_LOCK, so its count can differ from the prediction.
TEST(NativeRepro, MemlockBudgetFollowsTheAccounting) {
  const Case c = run_native("memlock_budget").cases["memlock_budget"];
  EXPECT_EQ(c.verdict(), "measured") << c.get("reason");
  EXPECT_EQ(c.get("buffers"), c.get("predicted_buffers"));
  EXPECT_LT(std::stoi(c.get("buffers")), 256) << "the loop cap: the limit never applied";
}

}  // namespace
}  // namespace sigwake
