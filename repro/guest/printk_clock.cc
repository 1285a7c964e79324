#include "printk_clock.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <fstream>

namespace sigwake {

namespace {

std::string seconds_of(const std::string& record) {
  const auto second = record.find(',', record.find(',') + 1);
  const unsigned long long usec = std::strtoull(record.c_str() + second + 1, nullptr, 10);
  char seconds[32];
  std::snprintf(seconds, sizeof seconds, "%llu.%06llu", usec / 1000000, usec % 1000000);
  return seconds;
}

}  // namespace

std::vector<std::string> continued_lines(const std::string& record, const std::string& seconds) {
  std::vector<std::string> lines;
  const auto semicolon = record.find(';');
  if (semicolon == std::string::npos) return lines;
  const std::string text = record.substr(semicolon + 1, record.find('\n', semicolon) - semicolon - 1);
  const std::string newline = "\\x0a";
  for (auto at = text.find(newline); at != std::string::npos;) {
    const auto from = at + newline.size();
    at = text.find(newline, from);
    const std::string line = text.substr(from, at == std::string::npos ? std::string::npos : at - from);
    if (!line.empty()) lines.push_back(seconds + " " + line);
  }
  return lines;
}

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

PrintkMark PrintkClock::mark() {
  PrintkMark found;
  if (fd_ < 0) return found;
  // <15>: facility user, level debug. The kernel stores it before write() returns.
  const std::string mark = "sigwake-clock " + std::to_string(++marks_);
  const std::string record = "<15>" + mark + "\n";
  if (write(fd_, record.data(), record.size()) != static_cast<ssize_t>(record.size())) return found;
  // Each read is one record, "prio,seq,usec,flags;text": ours follows whatever the kernel logged before it.
  char buffer[16384];  // a record is at most 8 KiB (CONSOLE_EXT_LOG_MAX); a read too short for one fails
  for (int records = 0; records < 100000; ++records) {
    const ssize_t n = read(fd_, buffer, sizeof buffer - 1);
    if (n < 0 && errno == EPIPE) {  // records overwritten before we read them: on to the next
      ++found.lost;
      continue;
    }
    if (n <= 0) return found;  // EAGAIN: ours is not there (a log too small to keep it?)
    const std::string text(buffer, static_cast<std::size_t>(n));
    const auto semicolon = text.find(';');
    if (semicolon != std::string::npos && text.compare(semicolon + 1, mark.size() + 1, mark + "\n") == 0) {
      found.now = seconds_of(text);
      return found;
    }
    for (std::string& line : continued_lines(text, seconds_of(text))) found.continued.push_back(std::move(line));
  }
  return found;
}

}  // namespace sigwake
