// The decision every signal case ends with. A kernel must produce its effects
// in order: a record for our trigger, the wakeup (POLLIN), then the signal; the
// verdict names the first one missing. Cases check what is special about them
// (the thread, the siginfo, the count) before they call this.
#pragma once

#include <string>

#include "report.h"

namespace sigwake {

struct Seen {
  int records = 0;       // records our trigger wrote (those of other tasks not counted)
  bool woken = false;    // poll() reported POLLIN
  int signals = 0;       // deliveries counted
};

// delivered (a record, the wakeup and the signal), or no-record / no-wakeup /
// not-delivered; `records_are` names the records in the reason ("SWITCH records").
void decide_watermark_signal(Report& report, const Seen& seen, const std::string& records_are);

// For a sample overflow set up so that the ring buffer never wakes (its
// watermark is the whole buffer): the signal can only come from
// __perf_event_overflow(). A wakeup means the output path fired after all, so a
// signal cannot be told apart: misdelivered.
void decide_overflow_signal(Report& report, const Seen& seen);

}  // namespace sigwake
