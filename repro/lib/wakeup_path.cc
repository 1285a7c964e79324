#include "wakeup_path.h"

#include <chrono>

#include "attrs.h"
#include "budgets.h"
#include "deadline.h"
#include "process.h"

namespace sigwake {

using namespace std::chrono_literals;

namespace {

constexpr std::uint64_t kPeriodNs = 100'000;
constexpr std::uint64_t kSampleBytes = 24;  // task_clock_overflow_attr's samples: header, IP, PID/TID

}  // namespace

WakeupFixture::WakeupFixture(WakeupPath path) : path_(path) {
  if (path_ == WakeupPath::kWatermark) {
    switch_.emplace();
    return;
  }
  event_.emplace(PerfEvent::open(task_clock_overflow_attr(kPeriodNs, ring_data_bytes(kOverflowRingPagesLog2)), 0, -1));
  ring_.emplace(RingBuffer::map(event_->fd(), kOverflowRingPagesLog2));
}

void WakeupFixture::trigger(std::uint64_t samples) {
  if (path_ == WakeupPath::kWatermark) {
    revents_ = switch_->trigger();
    return;
  }
  // Checked every 100 us of CPU time (a 16 KiB-page arm64 kernel under TCG wrote samples in bursts of 50-100,
  // and once none within 50 ms): stopped at `samples`, within the wakeup budget.
  const std::uint64_t from = ring_->head();
  event_->enable();
  const Deadline deadline(kWakeupBudget);
  while (ring_->head() - from < samples * kSampleBytes && !deadline.expired()) burn_cpu(100us);
  event_->disable();
}

short WakeupFixture::revents() const {
  return path_ == WakeupPath::kWatermark ? revents_ : wait_readable(event_->fd(), 0ms);
}

void WakeupFixture::decide(Report& report, const Seen& seen) const {
  if (path_ == WakeupPath::kWatermark) return decide_watermark_signal(report, seen, "SWITCH records");
  decide_overflow_signal(report, seen);
}

}  // namespace sigwake
