// Kernel-path evidence: which functions on the chain from a record to a signal
// ran for one process's perf events (repro/bpf/kernel_path.bpf.c), so that a
// not-delivered verdict shows where the chain stopped. Optional: where the
// kernel lacks BTF, kprobes or a symbol, the evidence says why instead.
#pragma once

#include <sys/types.h>

#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace sigwake {

class KernelPathTracer {
 public:
  // Loads and attaches what the running kernel allows; never fails: what could
  // not be had is reported by counts().
  KernelPathTracer();
  KernelPathTracer(const KernelPathTracer&) = delete;
  KernelPathTracer& operator=(const KernelPathTracer&) = delete;
  ~KernelPathTracer();

  // Counts from now on for the perf events owned by process `tgid`, from zero.
  void follow(pid_t tgid);

  // Per function, in chain order: a count, or "unavailable: <reason>".
  std::vector<std::pair<std::string, std::string>> counts() const;

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace sigwake
