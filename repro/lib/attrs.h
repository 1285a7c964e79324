// The perf_event_attr setups the reproducers share.
#pragma once

#include <linux/perf_event.h>

#include <cstdint>

namespace sigwake {

// rr's setup: a disabled software DUMMY event that writes PERF_RECORD_SWITCH
// records and wakes the reader once `watermark_bytes` are in the buffer.
perf_event_attr switch_watermark_attr(std::uint32_t watermark_bytes = 1);

// rr's startup probe: a disabled DUMMY event writing PERF_RECORD_MMAP for data
// (non-exec) mappings, waking the reader once `watermark_bytes` are written.
perf_event_attr mmap_watermark_attr(std::uint32_t watermark_bytes = 1);

// A disabled task-clock sampling event (IP | TID) that wakes after every sample.
perf_event_attr task_clock_sampling_attr(std::uint64_t period_ns);

}  // namespace sigwake
