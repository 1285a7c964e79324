// One page fault that is two overflows at one instruction, with software events alone.
#pragma once

#include <functional>

#include "perf_event.h"
#include "process.h"

namespace sigwake {

// Enables `event` (a page-fault sampling event of ours, period 1, neither freq nor PERF_SAMPLE_PERIOD, whose
// overflows perf_swevent_event() would take one at a time; with `refresh`, enabled by PERF_EVENT_IOC_REFRESH
// that many), gives it PERF_EVENT_IOC_PERIOD 2, writes `page` (never touched) and disables it again. On an
// active software event the ioctl zeroes the left count and keeps the last period, 1 (__perf_event_period()),
// so that fault overflows twice at one instruction (perf_swevent_set_period()). A context switch between the
// ioctl and the fault re-adds the event with the new period instead (perf_swevent_add()), and the fault is no
// overflow; a fault of our own code in the window is another overflow. A control event says which happened:
// changed before the event and disabled after it, its window holds the event's, and a switch that cleans the
// event cleans it too. True when it wrote two samples of that fault and nothing else (a throttled second
// overflow, under a lowered perf_event_max_sample_rate, would be false every time). When false, attempt again
// with fresh events (what ran is then faulted in).
bool fault_spanning_two_periods(const PerfEvent& event, const AnonymousPage& page, int refresh = 0);

// Runs `attempt` (numbered from 1; fresh events each time, true once fault_spanning_two_periods() held and the
// case decided) at most 5 times: one context switch in the window is rare, and each attempt faults in what the
// next one runs. Throws ReproError when none held: the case never reached its path.
void attempt_two_periods(const std::function<bool(int attempt)>& attempt);

}  // namespace sigwake
