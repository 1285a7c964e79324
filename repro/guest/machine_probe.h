// What the upstream selftests need of the machine beside the kernel, probed before they run: a machine that
// cannot count a breakpoint (a hypervisor without debug registers) or has no PMU fails or skips them whatever
// its kernel does, and the harness must not hold that against the kernel.
#pragma once

#include <string>
#include <vector>

namespace sigwake {

struct Capability {
  std::string name;    // "breakpoint", "pmu": what programs/peers.py says each selftest needs
  bool present = false;
  std::string detail;  // what the probe saw, in words
};

std::vector<Capability> probe_machine();

}  // namespace sigwake
