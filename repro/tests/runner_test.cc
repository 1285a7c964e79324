// The guest's reproducer runner: output capture, exit codes and the deadline.
#include <gtest/gtest.h>
#include <signal.h>

#include <chrono>

#include "../guest/runner.h"

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

TEST(Runner, KillsWhatAHungProgramForked) {
  // The grandchild keeps the pipe open; the group kill must end it too.
  const RunOutcome run = run_with_deadline({"/bin/sh", "-c", "sleep 60 & wait"}, 200ms);
  EXPECT_TRUE(run.timed_out);
  EXPECT_LT(run.duration_us, 5'000'000);
}

TEST(Runner, MissingProgramExits127) {
  const RunOutcome run = run_with_deadline({"/nonexistent/repro"}, 5s);
  EXPECT_TRUE(run.exited);
  EXPECT_EQ(run.exit_code, 127);
}

}  // namespace
}  // namespace sigwake
