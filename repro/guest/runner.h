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
  long long cpu_us = 0;  // the CPU time its processes took (user and system) by the end of duration_us, the
  // program and what it reaped: the rest of duration_us they waited
  int strays = 0;  // processes it left running after it ended, which the runner killed (strays.h)
};

// Whether a program (its path) may be granted what its cases ask (lib/grants.h): a reviewed list, runner.cc.
bool may_be_granted(const std::string& program);

// What a run may do.
struct RunLimits {
  int uid = -1;  // >= 0: the child drops to that uid and gid (and no groups); -1: root with perf's capabilities
  std::vector<std::string> grants;  // what it gets beyond that (lib/grants.h), as its case asked and may_be_granted()
  bool confined = false;  // in a view of the machine without the console's ways in (confine.h): a guest's runs
};

// fork + exec argv[0] with stdout/stderr on a pipe; SIGKILL at the deadline; then every process it left is killed.
// `started`, when given, runs with the child's pid before the child may exec.
RunOutcome run_with_deadline(const std::vector<std::string>& argv, std::chrono::milliseconds budget,
                             const RunLimits& limits = {}, const std::function<void(pid_t)>& started = {});

}  // namespace sigwake
