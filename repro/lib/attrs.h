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

// A disabled task-clock sampling event (IP | TID) whose ring buffer never wakes:
// its watermark is the whole data area (`ring_bytes`), so a signal can only come
// from the overflow path (__perf_event_overflow() sets pending_kill), never
// from perf_output_wakeup().
perf_event_attr task_clock_overflow_attr(std::uint64_t period_ns, std::uint32_t ring_bytes);

// A disabled page-fault sampling event (period 1, each sample the faulting address alone: PERF_SAMPLE_ADDR),
// user-mode faults only, whose ring never wakes, as task_clock_overflow_attr()'s.
perf_event_attr fault_address_attr(std::uint32_t ring_bytes);

// A software DUMMY event that only tells side-band records (the caller sets which: ksymbol, bpf_event,
// ...), each ending in an id sample of `sample_type` (sample_id_all); exclude_kernel keeps it open at
// perf_event_paranoid 2.
perf_event_attr sideband_attr(std::uint64_t sample_type);

// The data pages (log2) of an overflow case's ring: room for far more samples
// than a case writes before it decides.
inline constexpr unsigned kOverflowRingPagesLog2 = 3;

}  // namespace sigwake
