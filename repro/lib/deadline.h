// Bounded waits: every wait in sigwake has a deadline on CLOCK_MONOTONIC.
#pragma once

#include <time.h>

#include <chrono>
#include <cstdint>

namespace sigwake {

inline std::int64_t monotonic_ns() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);  // async-signal-safe, used by handlers too
  return std::int64_t{ts.tv_sec} * 1'000'000'000 + ts.tv_nsec;
}

class Deadline {
 public:
  explicit Deadline(std::chrono::nanoseconds budget) : end_ns_(monotonic_ns() + budget.count()) {}

  bool expired() const { return remaining_ns() == 0; }

  std::int64_t remaining_ns() const {
    const std::int64_t left = end_ns_ - monotonic_ns();
    return left > 0 ? left : 0;
  }

  timespec remaining_timespec() const {
    const std::int64_t left = remaining_ns();
    return timespec{static_cast<time_t>(left / 1'000'000'000), static_cast<long>(left % 1'000'000'000)};
  }

 private:
  std::int64_t end_ns_;
};

}  // namespace sigwake
