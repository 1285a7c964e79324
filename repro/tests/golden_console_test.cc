// The golden console logs of harness/tests/data (consoles/README.md), read here
// as the Python tests read them (test_golden_consoles.py): both sides must
// count the same whole frames whose CRC holds, and the guest's own writer must
// frame the real boot's payloads again byte for byte.
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "../guest/frame.h"

namespace sigwake {
namespace {

struct Frame {
  std::string token, seq, crc, payload;
};

std::string data_dir() {
  const char* dir = std::getenv("SIGWAKE_TEST_DATA");
  return dir != nullptr ? dir : "";
}

std::vector<std::string> lines_of(const std::string& path) {
  std::ifstream in(path);
  EXPECT_TRUE(in.good()) << path;
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    lines.push_back(line);
  }
  return lines;
}

bool all_of(const std::string& s, const char* allowed) {
  return !s.empty() && s.find_first_not_of(allowed) == std::string::npos;
}

// `SIGWAKE <token> <seq> <crc32> <payload>`, the whole line (frame.h).
bool parse_frame(const std::string& line, Frame& f) {
  std::istringstream words(line);
  std::string tag;
  if (!(words >> tag >> f.token >> f.seq >> f.crc) || tag != "SIGWAKE") return false;
  const std::string head = "SIGWAKE " + f.token + " " + f.seq + " " + f.crc + " ";
  if (line.rfind(head, 0) != 0) return false;
  f.payload = line.substr(head.size());
  return all_of(f.token, "0123456789abcdef") && all_of(f.seq, "0123456789") && f.crc.size() == 8 &&
         all_of(f.crc, "0123456789abcdef");
}

bool crc_holds(const Frame& f) {
  char hex[9];
  std::snprintf(hex, sizeof hex, "%08x", crc32(f.token + " " + f.seq + " " + f.payload));
  return f.crc == hex;
}

// The count the Python side wrote into the golden's expected file.
long expected_whole_frames(const std::string& golden) {
  const std::string path = data_dir() + "/consoles/" + golden + ".expected.json";
  std::ifstream in(path);
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const std::size_t at = text.find("\"whole_frames\": ");
  EXPECT_NE(at, std::string::npos) << path;
  return at == std::string::npos ? -1 : std::strtol(text.c_str() + at + 16, nullptr, 10);
}

struct Golden {
  const char* name;  // as test_golden_consoles.py names it
  const char* log;   // under harness/tests/data
};

class GoldenConsole : public ::testing::TestWithParam<Golden> {};

TEST_P(GoldenConsole, CountsTheWholeFramesThePythonReaderCounts) {
  if (data_dir().empty()) GTEST_SKIP() << "SIGWAKE_TEST_DATA is not set (meson test sets it)";
  const std::string log = data_dir() + "/" + GetParam().log;
  long whole = 0;
  Frame f;
  for (const std::string& line : lines_of(log)) whole += parse_frame(line, f) && crc_holds(f);
  EXPECT_GT(whole, 0) << log;
  EXPECT_EQ(whole, expected_whole_frames(GetParam().name)) << log;
}

INSTANTIATE_TEST_SUITE_P(Logs, GoldenConsole,
                         ::testing::Values(Golden{"framed", "consoles/framed.log"}, Golden{"torn", "consoles/torn.log"},
                                           Golden{"panicked",
                                                  "crash-cloud-6.12.95/6.12.95+deb12-cloud-amd64.console.log"}),
                         [](const auto& info) { return std::string(info.param.name); });

TEST(GoldenConsole, TheGuestWriterFramesARealBootAgainByteForByte) {
  if (data_dir().empty()) GTEST_SKIP() << "SIGWAKE_TEST_DATA is not set (meson test sets it)";
  std::vector<Frame> frames;
  Frame f;
  for (const std::string& line : lines_of(data_dir() + "/consoles/framed.log")) {
    if (parse_frame(line, f)) frames.push_back(f);
  }
  ASSERT_FALSE(frames.empty());
  Framer framer(frames.front().token);
  for (const Frame& frame : frames) {
    EXPECT_EQ(framer.frame(frame.payload),
              "SIGWAKE " + frame.token + " " + frame.seq + " " + frame.crc + " " + frame.payload + "\n");
  }
}

}  // namespace
}  // namespace sigwake
