// The two ways a FASYNC perf event signals its owner, so that a case written
// once runs over both (its variants, as kselftest_harness.h's FIXTURE_VARIANT):
// a sample overflow (__perf_event_overflow(), on every kernel; the ring never
// reaches its watermark) or the ring's watermark wakeup (perf_output_wakeup(),
// signalling since fd20bb51ed39, v6.10).
#pragma once

#include <cstdint>
#include <optional>

#include "decide.h"
#include "fixture.h"
#include "perf_event.h"
#include "report.h"
#include "ring_buffer.h"

namespace sigwake {

enum class WakeupPath { kOverflow, kWatermark };

class WakeupFixture {
 public:
  // The overflow path: this thread's CPU time sampled every 100 us into an
  // 8-page ring. The watermark path: the switch fixture (fixture.h).
  explicit WakeupFixture(WakeupPath path);

  // The overflow path: enables the event, spends CPU time until `samples`
  // more samples are in the ring (or the wakeup budget is spent), disables it. The
  // watermark path: SwitchFixture::trigger() (two crossings).
  void trigger(std::uint64_t samples = 1);

  // What poll() reports now (the watermark path: what its trigger's poll saw).
  short revents() const;

  // The path's rule (decide.h): decide_overflow_signal or decide_watermark_signal.
  void decide(Report& report, const Seen& seen) const;

  PerfEvent& event() { return path_ == WakeupPath::kWatermark ? switch_->event : *event_; }
  RingBuffer& ring() { return path_ == WakeupPath::kWatermark ? switch_->ring : *ring_; }

 private:
  WakeupPath path_;
  std::optional<SwitchFixture> switch_;
  std::optional<PerfEvent> event_;
  std::optional<RingBuffer> ring_;
  short revents_ = 0;
};

}  // namespace sigwake
