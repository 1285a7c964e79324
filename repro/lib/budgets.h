// How long reproducers wait. Every wait has one of these as its deadline.
#pragma once

#include <chrono>

namespace sigwake {

using namespace std::chrono_literals;

// For a wakeup (a record written, poll() woken) that a kernel must produce.
inline constexpr auto kWakeupBudget = 2000ms;

// For the signal after the wakeup was seen. On fixed kernels the signal is sent
// by the same irq_work that wakes poll(), on the CPU we pin to, so it is already
// pending when poll() returns; the grace covers scheduling noise only.
inline constexpr auto kSignalGrace = 50ms;

// After the first signal of a burst, for any that follow. Every signal of a
// burst is sent by irq_work on our CPU before the triggering call returns, so
// this only covers noise; it is what lets a count say "exactly".
inline constexpr auto kSettle = 10ms;

// For a wakeup that should not come (guards against one that does).
inline constexpr auto kQuietWindow = 50ms;

}  // namespace sigwake
