// The guest's reproducer runner: output capture, exit codes and the deadline.
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <iterator>
#include <string>

#include "../guest/runner.h"
#include "../lib/deadline.h"

namespace sigwake {
namespace {

using namespace std::chrono_literals;

TEST(Runner, CapturesOutputAndExitCode) {
  const RunOutcome run = run_with_deadline({"/bin/sh", "-c", "echo out; echo err >&2; exit 4"}, 5s);
  EXPECT_TRUE(run.exited);
  EXPECT_FALSE(run.timed_out);
  EXPECT_EQ(run.exit_code, 4);
  EXPECT_EQ(run.output, "out\nerr\n");
}

TEST(Runner, KillsAHungProgramAtTheDeadline) {
  const RunOutcome run = run_with_deadline({"/bin/sleep", "60"}, 200ms);
  EXPECT_TRUE(run.timed_out);
  EXPECT_FALSE(run.exited);
  EXPECT_EQ(run.term_signal, SIGKILL);
  EXPECT_LT(run.duration_us, 5'000'000);
}

// 'R', 'S', 'Z', ... of a process, or 0 once it is gone.
char process_state(pid_t pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string text((std::istreambuf_iterator<char>(stat)), std::istreambuf_iterator<char>());
  const auto paren = text.rfind(')');
  return paren != std::string::npos && paren + 2 < text.size() ? text[paren + 2] : 0;
}

TEST(Runner, KillsWhatAHungProgramForked) {
  // The grandchild keeps the pipe open; the group kill must end it too (the runner stops reading at the
  // deadline either way, so only the grandchild's own state tells).
  const RunOutcome run = run_with_deadline({"/bin/sh", "-c", "sleep 60 & echo $!; wait"}, 300ms);
  EXPECT_TRUE(run.timed_out);
  EXPECT_LT(run.duration_us, 5'000'000);
  const pid_t grandchild = std::stoi(run.output);
  const Deadline dead_by(5s);  // SIGKILL is delivered when the process next runs: bounded, not slept on
  char state = process_state(grandchild);
  while (state != 0 && state != 'Z' && state != 'X' && !dead_by.expired()) state = process_state(grandchild);
  EXPECT_TRUE(state == 0 || state == 'Z' || state == 'X') << "the forked sleep outlived the deadline: " << state;
}

TEST(Runner, MissingProgramExits127) {
  const RunOutcome run = run_with_deadline({"/nonexistent/repro"}, 5s);
  EXPECT_TRUE(run.exited);
  EXPECT_EQ(run.exit_code, 127);
}

TEST(Runner, AProgramThatClosesItsOutputAndLivesOnIsKilledAtTheDeadline) {
  // Its output ends at once; its wait may not outlast the deadline (it would hold the guest until the host's).
  const RunOutcome run = run_with_deadline({"/bin/sh", "-c", "exec >&- 2>&-; exec sleep 60"}, 300ms);
  EXPECT_TRUE(run.timed_out);
  EXPECT_EQ(run.term_signal, SIGKILL);
  EXPECT_LT(run.duration_us, 5'000'000);
}

TEST(Runner, KillsWhatARunLeftRunningAfterItEnded) {
  // A daemon in a session of its own escapes the group kill, and the run ends at once: only the sweep finds it.
  const RunOutcome run = run_with_deadline({"/bin/sh", "-c", "setsid sleep 60 >/dev/null 2>&1 & echo $!"}, 5s);
  EXPECT_TRUE(run.exited);
  EXPECT_FALSE(run.timed_out);
  EXPECT_EQ(run.strays, 1);
  const char state = process_state(std::stoi(run.output));
  EXPECT_TRUE(state == 0 || state == 'X') << "the daemon outlived the sweep: " << state;
}

TEST(Runner, AConfinedRunFindsNoWayToTheConsole) {
  if (geteuid() != 0) GTEST_SKIP() << "confining a run takes root (a mount namespace)";
  // Each line a way a root run could speak for the kernel; each must fail.
  const RunOutcome run = run_with_deadline(
      {"/bin/sh", "-c",
       "for d in console kmsg ttyS0 tty; do [ -e /dev/$d ] && echo found /dev/$d; done; "
       "[ -e /dev/null ] || echo no /dev/null; "
       "(cat /proc/sys/kernel/printk > /proc/sys/kernel/printk) 2>/dev/null && echo wrote printk; "
       "(: > /proc/sysrq-trigger) 2>/dev/null && echo opened sysrq-trigger; echo done"},
      5s, RunLimits{.confined = true});
  EXPECT_TRUE(run.exited);
  EXPECT_EQ(run.output, "done\n");
}

TEST(Runner, GivesCapSysAdminOnlyToARunGrantedIt) {
  const std::string show = "echo $(( 0x$(grep CapEff /proc/self/status | cut -f2) >> 21 & 1 ))";  // CAP_SYS_ADMIN
  int paranoid = 0;
  std::ifstream("/proc/sys/kernel/perf_event_paranoid") >> paranoid;
  if (paranoid > 2) GTEST_SKIP() << "perf_event_paranoid " << paranoid << ": perf asks CAP_SYS_ADMIN, so every run keeps it";
  EXPECT_EQ(run_with_deadline({"/bin/sh", "-c", show}, 5s).output, "0\n");
  if (geteuid() != 0) GTEST_SKIP() << "only root has it to give";
  EXPECT_EQ(run_with_deadline({"/bin/sh", "-c", show}, 5s, RunLimits{.grants = {"CAP_SYS_ADMIN"}}).output, "1\n");
}

}  // namespace
}  // namespace sigwake
