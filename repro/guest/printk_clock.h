// The clock the kernel's log carries (a report's "[   12.345678]"), read by writing a record of our own into
// /dev/kmsg and reading its timestamp back. It is at KERN_DEBUG, which a console at loglevel 7 does not print.
// The runs' start and end on this clock let the harness place a report by when the kernel wrote it, not by
// where its lines reached the console: a PREEMPT_RT kernel prints them from a thread of its own, late.
//
// Reading up to our mark, it also reads every record the kernel logged since the last: a record with a newline
// in it (a string a process chose, such as an exec'd path, printed by the kernel) reaches the console as
// several lines, each with the record's timestamp, and a later one can look like the start of a kernel report.
// /dev/kmsg escapes that newline ("\x0a"), so the lines after it are known and said, and never read as one.
#pragma once

#include <string>
#include <vector>

namespace sigwake {

struct PrintkMark {
  std::string now;  // "12.345678", seconds as printk prints them; "" where the kernel keeps no log
  // "<seconds> <text>": each line after the first of a record logged since the last mark, its text as /dev/kmsg
  // escapes it (\xNN for a byte below ' ', from 127, and '\').
  std::vector<std::string> continued;
  unsigned long long lost = 0;  // reads that found records overwritten before they were read: lines not known
};

class PrintkClock {
 public:
  PrintkClock();  // PID 1, before any run (runs never see /dev/kmsg: confine.h)
  ~PrintkClock();
  PrintkClock(const PrintkClock&) = delete;
  PrintkClock& operator=(const PrintkClock&) = delete;

  PrintkMark mark();
  bool readable() const { return fd_ >= 0; }  // without /dev/kmsg the kernel's records are not read at all

 private:
  int fd_ = -1;
  unsigned long long marks_ = 0;
};

// The lines after the first of one /dev/kmsg record ("prio,seq,usec,flags;text\n" and its dictionary),
// each "<seconds> <escaped text>"; none for a record of one line.
std::vector<std::string> continued_lines(const std::string& record, const std::string& seconds);

}  // namespace sigwake
