// sigwake-kernel-path PROGRAM [ARGS...]: runs PROGRAM natively with the
// kernel-path tracer following it, prints its output and then one
// `# kernel_path.<function>=<count or why unavailable>` line per function.
// Exits with PROGRAM's exit code.
#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include "../lib/kernel_path.h"
#include "runner.h"

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fputs("usage: sigwake-kernel-path PROGRAM [ARGS...]\n", stderr);
    return 2;
  }
  sigwake::KernelPathTracer tracer;
  const std::vector<std::string> program(argv + 1, argv + argc);
  const sigwake::RunOutcome run = sigwake::run_with_deadline(program, std::chrono::seconds(60), -1,
                                                             [&tracer](pid_t pid) { tracer.follow(pid); });
  std::fwrite(run.output.data(), 1, run.output.size(), stdout);
  for (const auto& [function, value] : tracer.counts()) std::printf("# kernel_path.%s=%s\n", function.c_str(), value.c_str());
  return run.exited ? run.exit_code : 1;
}
