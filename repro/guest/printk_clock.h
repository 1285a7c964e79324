// The clock the kernel's log carries (a report's "[   12.345678]"), read by writing a record of our own into
// /dev/kmsg and reading its timestamp back. It is at KERN_DEBUG, which a console at loglevel 7 does not print.
// The runs' start and end on this clock let the harness place a report by when the kernel wrote it, not by
// where its lines reached the console: a PREEMPT_RT kernel prints them from a thread of its own, late.
#pragma once

#include <string>

namespace sigwake {

class PrintkClock {
 public:
  PrintkClock();  // PID 1, before any run (runs never see /dev/kmsg: confine.h)
  ~PrintkClock();
  PrintkClock(const PrintkClock&) = delete;
  PrintkClock& operator=(const PrintkClock&) = delete;

  // "12.345678", seconds as printk prints them; "" where the kernel keeps no log (no CONFIG_PRINTK).
  std::string now();

 private:
  int fd_ = -1;
  unsigned long long marks_ = 0;
};

}  // namespace sigwake
