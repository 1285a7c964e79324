// The evidence triad every reproducer reports: record written, poll ready, signal.
#pragma once

#include "report.h"
#include "ring_buffer.h"
#include "signal_capture.h"

namespace sigwake {

// records=N, record_types=SWITCH,MMAP,..., records_truncated; returns N.
int add_record_evidence(Report& report, const RecordRead& read);

// pollin=0|1 and poll_revents=0x..
void add_poll_evidence(Report& report, short revents);

// signals=N and, for the first delivery, its signo, si_code, si_band, si_fd and
// thread; every key behind `prefix` where one reproducer watches several signals.
void add_signal_evidence(Report& report, const SignalCapture& capture, const std::string& prefix = "");

}  // namespace sigwake
