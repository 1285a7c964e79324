// The guest's reproducer runner: output capture, exit codes and the deadline.
#include <gtest/gtest.h>
#include <signal.h>

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

}  // namespace
}  // namespace sigwake
