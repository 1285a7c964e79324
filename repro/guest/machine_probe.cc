#include "machine_probe.h"

#include <linux/hw_breakpoint.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <cstdint>
#include <string>

#include "../lib/errors.h"
#include "../lib/perf_event.h"

namespace sigwake {
namespace {

constexpr int kWrites = 1000;
volatile int watched = 0;  // the breakpoint's address

// A write breakpoint on a variable of our own, written kWrites times: a machine whose debug registers work
// counts every write (sigtrap_threads' events are such breakpoints).
Capability probe_breakpoint() {
  perf_event_attr attr = blank_attr(PERF_TYPE_BREAKPOINT, 0);
  attr.bp_type = HW_BREAKPOINT_W;
  attr.bp_addr = reinterpret_cast<std::uintptr_t>(&watched);
  attr.bp_len = HW_BREAKPOINT_LEN_4;
  attr.exclude_kernel = 1;
  attr.exclude_hv = 1;
  attr.disabled = 1;
  try {
    const PerfEvent event = PerfEvent::open(attr, 0, -1);
    event.enable();
    for (int i = 0; i < kWrites; ++i) watched = i;
    event.disable();
    std::uint64_t count = 0;
    if (read(event.fd(), &count, sizeof count) != sizeof count) return {"breakpoint", false, "its count cannot be read"};
    return {"breakpoint", count == kWrites,
            "counted " + std::to_string(count) + " of " + std::to_string(kWrites) + " writes"};
  } catch (const std::exception& e) {
    return {"breakpoint", false, e.what()};
  }
}

// A hardware PMU: user-space instructions can be counted (remove_on_exec's events are).
Capability probe_pmu() {
  perf_event_attr attr = blank_attr(PERF_TYPE_HARDWARE, PERF_COUNT_HW_INSTRUCTIONS);
  attr.exclude_kernel = 1;
  attr.exclude_hv = 1;
  attr.disabled = 1;
  try {
    const PerfEvent event = PerfEvent::open(attr, 0, -1);
    return {"pmu", true, "counts instructions"};
  } catch (const std::exception& e) {
    return {"pmu", false, e.what()};
  }
}

}  // namespace

std::vector<Capability> probe_machine() { return {probe_breakpoint(), probe_pmu()}; }

}  // namespace sigwake
