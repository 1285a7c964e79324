// The setup most watermark cases share, held the way kselftest_harness.h
// fixtures hold a test's common state: everything pinned to CPU 0, a stopped
// child, a disabled DUMMY event writing PERF_RECORD_SWITCH past a 1-byte
// watermark (or the attr given), its 1+1-page ring mapped. A case adds what is
// special about it (F_SETOWN, SET_OUTPUT, a decoy) before trigger().
#pragma once

#include <linux/perf_event.h>

#include <chrono>
#include <functional>

#include "attrs.h"
#include "budgets.h"
#include "perf_event.h"
#include "process.h"
#include "ring_buffer.h"

namespace sigwake {

class SwitchFixture {
  // First, so that the child (and its records, and their irq_work) share our CPU.
  struct Pinned {
    Pinned() { pin_to_cpu(0); }
  } pinned_;

 public:
  // The event follows the child, the child on CPU 0 only (perf_mmap() maps no ring for an inherited event
  // that follows a task on every CPU), or all of CPU 0.
  enum class Scope { kChild, kChildOnCpu0, kCpu0 };

  // `after_resume` is what the child does once resumed (StoppedChild's).
  explicit SwitchFixture(const perf_event_attr& attr = switch_watermark_attr(1), Scope scope = Scope::kChild,
                         std::function<void()> after_resume = {});

  // Enables the event, resumes the child (it switches in, stops, switches out)
  // and polls the event for `poll_events` up to `wait`, then runs `once_polled` (a
  // child that runs until told is told here); returns the revents. Throws
  // ReproError if the child never ran: no record then says nothing of the kernel.
  short trigger(std::chrono::milliseconds wait = kWakeupBudget, const std::function<void()>& once_polled = {});

  short poll_events = POLLIN;  // what trigger() polls for
  StoppedChild child;
  PerfEvent event;
  RingBuffer ring;
};

}  // namespace sigwake
