// Machine-wide settings under /proc/sys that a case changes for its own time: only on a machine sigwake booted
// (in_sigwake_guest()), never on a host the programs run on natively.
#pragma once

#include <string>

namespace sigwake {

// The integer a sysctl file holds (e.g. "kernel/perf_event_mlock_kb"); ReproError when it cannot be read.
long read_sysctl(const std::string& name);

// A sysctl set for as long as it lives, then put back. Unsupported when the kernel refuses the value (only
// root may write these; some refuse it in a state of their own), with the kernel's errno.
class SysctlFor {
 public:
  SysctlFor(std::string name, long value);
  SysctlFor(const SysctlFor&) = delete;
  SysctlFor& operator=(const SysctlFor&) = delete;
  ~SysctlFor();

 private:
  std::string name_;
  long old_;
};

}  // namespace sigwake
