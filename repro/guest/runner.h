// Runs one reproducer in the guest under a deadline, capturing all it prints.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <functional>
#include <string>
#include <vector>

namespace sigwake {

struct RunOutcome {
  std::string output;    // stdout and stderr, interleaved as written
  int exit_code = -1;    // valid when exited
  int term_signal = 0;   // the signal that ended it, when it did not exit
  bool exited = false;
  bool timed_out = false;  // killed at the deadline
  long long duration_us = 0;
};

// fork + exec argv[0] with stdout/stderr on a pipe; SIGKILL at the deadline.
// With `uid` >= 0 the child drops to that uid and gid (and no groups) first.
// `started`, when given, runs with the child's pid before the child may exec.
RunOutcome run_with_deadline(const std::vector<std::string>& argv, std::chrono::milliseconds budget, int uid = -1,
                             const std::function<void(pid_t)>& started = {});

}  // namespace sigwake
