// Framing of the guest's results on the serial console. Every line the init
// writes is `SIGWAKE <token> <seq> <crc32> <payload>`: the per-boot token comes
// from a root-only file in the initramfs (or the host runner's stdin), seq counts from 0 and the CRC-32 covers
// "<token> <seq> <payload>". Kernel printk lines, torn lines and anything a
// reproducer prints (it only ever reaches the console through the init, as
// payload) can neither be read as a result nor forge one.
// harness/sigwake/console.py reads this format.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>

namespace sigwake {

std::uint32_t crc32(std::string_view bytes);

class Framer {
 public:
  explicit Framer(std::string token) : token_(std::move(token)) {}
  std::string frame(std::string_view payload);  // one framed line, newline included

 private:
  std::string token_;
  unsigned seq_ = 0;
};

// Framed lines onto a file descriptor, one write() per line so that a line stays
// whole beside other writers (the kernel's printk on a console).
class FramedWriter {
 public:
  FramedWriter(int fd, std::string token) : fd_(fd), framer_(std::move(token)) {}
  void operator()(const std::string& payload);

 private:
  int fd_;
  Framer framer_;
};

}  // namespace sigwake
