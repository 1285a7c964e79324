#include "attrs.h"

#include "perf_event.h"

namespace sigwake {
namespace {

// A disabled DUMMY event that writes no samples and wakes the reader once
// `watermark_bytes` of records are in the buffer; exclude_kernel keeps it open
// to unprivileged users at perf_event_paranoid 2 (records are written all the same).
perf_event_attr dummy_watermark_attr(std::uint32_t watermark_bytes) {
  perf_event_attr attr = blank_attr(PERF_TYPE_SOFTWARE, PERF_COUNT_SW_DUMMY);
  attr.sample_period = 1;
  attr.watermark = 1;
  attr.wakeup_watermark = watermark_bytes;
  attr.exclude_kernel = 1;
  attr.exclude_hv = 1;
  attr.disabled = 1;
  return attr;
}

}  // namespace

perf_event_attr switch_watermark_attr(std::uint32_t watermark_bytes) {
  perf_event_attr attr = dummy_watermark_attr(watermark_bytes);
  attr.context_switch = 1;
  return attr;
}

perf_event_attr mmap_watermark_attr(std::uint32_t watermark_bytes) {
  perf_event_attr attr = dummy_watermark_attr(watermark_bytes);
  attr.mmap_data = 1;
  return attr;
}

perf_event_attr sideband_attr(std::uint64_t sample_type) {
  perf_event_attr attr = blank_attr(PERF_TYPE_SOFTWARE, PERF_COUNT_SW_DUMMY);
  attr.sample_id_all = 1;
  attr.sample_type = sample_type;
  attr.exclude_kernel = 1;
  attr.exclude_hv = 1;
  return attr;
}

perf_event_attr task_clock_overflow_attr(std::uint64_t period_ns, std::uint32_t ring_bytes) {
  perf_event_attr attr = blank_attr(PERF_TYPE_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK);
  attr.sample_period = period_ns;
  attr.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID;
  attr.watermark = 1;
  attr.wakeup_watermark = ring_bytes;
  attr.exclude_kernel = 1;  // allowed at perf_event_paranoid 2
  attr.exclude_hv = 1;
  attr.disabled = 1;
  return attr;
}

perf_event_attr fault_address_attr(std::uint32_t ring_bytes) {
  perf_event_attr attr = task_clock_overflow_attr(1, ring_bytes);
  attr.config = PERF_COUNT_SW_PAGE_FAULTS;
  attr.sample_type = PERF_SAMPLE_ADDR;
  return attr;
}

}  // namespace sigwake
