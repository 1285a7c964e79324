// How long reproducers wait. Every wait has one of these as its deadline.
#pragma once

#include <chrono>

namespace sigwake {

using namespace std::chrono_literals;

// For a wakeup (a record written, poll() woken) that a kernel must produce.
// Under TCG one comes within a millisecond; on a kernel that never wakes, every
// case waits this out, so it stays far above the one and far below a boot's patience.
inline constexpr auto kWakeupBudget = 1000ms;

// For the signal after the wakeup was seen. perf_event_wakeup() wakes poll()
// and then calls kill_fasync() in the same irq_work, on the CPU we pin to, so
// our woken thread cannot run before the signal is pending: the grace covers
// noise only. Measured under TCG: the handler runs 0.1-0.3 ms after poll()
// returns (evidence signal_after_poll_us), a hundredth of this. Not for another
// process's signal: see SignalWitness::received().
inline constexpr auto kSignalGrace = 30ms;

// After the first signal of a burst, for any that follow. Every signal of a
// burst is sent by irq_work on our CPU before the triggering call returns, so
// this only covers noise; it is what lets a count say "exactly".
inline constexpr auto kSettle = 10ms;

// For a wakeup that should not come (guards against one that does).
inline constexpr auto kQuietWindow = 30ms;

}  // namespace sigwake
