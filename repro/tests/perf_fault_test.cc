// Whose fault is a failed setup: the kernel's (Unsupported, with the probe
// that showed it) or ours (ReproError). Needs perf events on the host.
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <string>

#include "../lib/attrs.h"
#include "../lib/errors.h"
#include "../lib/perf_event.h"
#include "../lib/process.h"
#include "../lib/ring_buffer.h"

namespace sigwake {
namespace {

TEST(PerfFault, AnAttrTheKernelAcceptsFeatureByFeatureIsOurError) {
  perf_event_attr attr = switch_watermark_attr(1);
  attr.read_format = 1ULL << 40;  // no such read_format bit: EINVAL, and no probe blames the kernel
  try {
    PerfEvent::open(attr, 0, -1);
    FAIL() << "opened";
  } catch (const ReproError& e) {
    EXPECT_NE(std::string(e.what()).find("probe: the kernel accepts each feature"), std::string::npos) << e.what();
  }
}

TEST(PerfFault, AnEventTypeTheKernelLacksIsUnsupportedAndNamesTheProbe) {
  const perf_event_attr attr = blank_attr(0xffff, 0);
  try {
    PerfEvent::open(attr, 0, -1);
    FAIL() << "opened";
  } catch (const Unsupported& e) {
    EXPECT_NE(std::string(e.what()).find("probe: a minimal event of type 65535"), std::string::npos) << e.what();
  }
}

TEST(PerfFault, AMisSizedSecondMappingIsOurError) {
  PerfEvent event = PerfEvent::open(switch_watermark_attr(1), 0, -1);
  RingBuffer ring = RingBuffer::map(event.fd(), 0);
  EXPECT_THROW(RingBuffer::map(event.fd(), 1), ReproError);  // EINVAL: a buffer exists with another size
}

TEST(PerfFault, SetOutputAcrossTasksIsOurError) {
  StoppedChild child;
  PerfEvent ours = PerfEvent::open(switch_watermark_attr(1), 0, -1);
  PerfEvent theirs = PerfEvent::open(switch_watermark_attr(1), child.pid(), -1);
  RingBuffer ring = RingBuffer::map(ours.fd(), 0);
  EXPECT_THROW(theirs.set_output(ours), ReproError);  // per-task events of two tasks cannot share a buffer
}

}  // namespace
}  // namespace sigwake
