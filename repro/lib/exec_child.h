// A child that runs a case's setup and then execs a new image of this program (SIGWAKE_IMAGE), for cases
// that watch what execve() does to the events the child opened.
#pragma once

#include <sys/types.h>

#include <functional>
#include <string>
#include <vector>

namespace sigwake {

// How an exec case's child, or its new image, ends when it cannot go on.
constexpr int kExecSetupFailed = 4;
constexpr int kExecRefused = 5;  // the kernel refused the child's setup (Unsupported)

struct ExecChild {
  int status = 0;   // waitpid()'s
  std::string why;  // a child that ended before its exec says why

  // Throws Unsupported or ReproError, with the child's words, for a child that ended with kExecRefused or
  // kExecSetupFailed.
  void raise_setup_failure() const;
};

// Forks a child that runs `body` up to its exec, runs `meanwhile` (if any), and waits for the child's end. A
// body that throws, or whose exec returns, ends the child (kExecRefused for Unsupported, kExecSetupFailed
// otherwise) and sends its words back.
ExecChild run_exec_child(const std::function<void()>& body, const std::function<void(pid_t)>& meanwhile = {});

// In the child: closes stdout (the new image is no case: no KTAP of ours) and execs `PROGRAM --image IMAGE ARGS`
// (SIGWAKE_IMAGE). Returns only when execv() failed, errno set.
void exec_image(const char* image, const std::vector<std::string>& args);

}  // namespace sigwake
