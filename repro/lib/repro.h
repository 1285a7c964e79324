// What a reproducer file provides; repro/lib/main.cc supplies main().
#pragma once

#include "deadline.h"
#include "errors.h"
#include "perf_event.h"
#include "report.h"
#include "ring_buffer.h"
#include "signal_capture.h"

namespace sigwake {

// The reproducer's KTAP test name.
extern const char* const kReproName;

// Sets up, triggers, collects evidence into `report` and decides its verdict.
// Throwing Unsupported or ReproError decides `unsupported` or `error`.
void reproduce(Report& report);

}  // namespace sigwake
