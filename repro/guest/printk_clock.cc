#include "printk_clock.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <fstream>

namespace sigwake {

PrintkClock::PrintkClock() {
  // Unlimited: by default /dev/kmsg drops a writer's records past 10 in 5 s. Runs cannot set it back (confine.h).
  std::ofstream("/proc/sys/kernel/printk_devkmsg") << "on\n";
  fd_ = open("/dev/kmsg", O_RDWR | O_NONBLOCK | O_CLOEXEC);
  if (fd_ >= 0 && lseek(fd_, 0, SEEK_END) < 0) {
    close(fd_);
    fd_ = -1;
  }
}

PrintkClock::~PrintkClock() {
  if (fd_ >= 0) close(fd_);
}

std::string PrintkClock::now() {
  if (fd_ < 0) return "";
  // <15>: facility user, level debug. The kernel stores it before write() returns.
  const std::string mark = "sigwake-clock " + std::to_string(++marks_);
  const std::string record = "<15>" + mark + "\n";
  if (write(fd_, record.data(), record.size()) != static_cast<ssize_t>(record.size())) return "";
  // Each read is one record, "prio,seq,usec,flags;text": ours follows whatever the kernel logged before it.
  char buffer[16384];  // a record is at most 8 KiB (CONSOLE_EXT_LOG_MAX); a read too short for one fails
  for (int records = 0; records < 100000; ++records) {
    const ssize_t n = read(fd_, buffer, sizeof buffer - 1);
    if (n < 0 && errno == EPIPE) continue;  // records overwritten before we read them: on to the next
    if (n <= 0) return "";  // EAGAIN: ours is not there (a log too small to keep it?)
    buffer[n] = '\0';
    const std::string text(buffer, static_cast<std::size_t>(n));
    const auto semicolon = text.find(';');
    if (semicolon == std::string::npos || text.compare(semicolon + 1, mark.size() + 1, mark + "\n") != 0) continue;
    const auto second = text.find(',', text.find(',') + 1);
    const unsigned long long usec = std::strtoull(text.c_str() + second + 1, nullptr, 10);
    char seconds[32];
    std::snprintf(seconds, sizeof seconds, "%llu.%06llu", usec / 1000000, usec % 1000000);
    return seconds;
  }
  return "";
}

}  // namespace sigwake
