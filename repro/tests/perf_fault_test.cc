// Whose fault is a failed setup: the kernel's (Unsupported, with the probe
// that showed it; Misdelivered, for an owner it should not take) or ours
// (ReproError). Needs perf events on the host.
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <optional>
#include <string>

#include "../lib/attrs.h"
#include "../lib/errors.h"
#include "../lib/owner_thread.h"
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

TEST(PerfFault, AGoneOwnerIsRefused) {
  using namespace std::chrono_literals;
  const PerfEvent event = PerfEvent::open(switch_watermark_attr(1), 0, -1);
  std::optional<SignalWitness> child(std::in_place, SIGIO);
  const pid_t pid = child->pid();
  event.set_owner(pid);
  child.reset();  // reaped: its number names nobody
  EXPECT_EQ(event.refuse_gone_owner(pid, PerfEvent::Owner::kProcess, 1s), ESRCH);
  SignalCapture capture(SIGIO);
  OwnerThread thread(capture);
  event.set_owner(thread.tid(), PerfEvent::Owner::kThread);
  thread.take();  // joined; the kernel may free its number a moment later
  EXPECT_EQ(event.refuse_gone_owner(thread.tid(), PerfEvent::Owner::kThread, 1s), ESRCH);
}

TEST(PerfFault, AnOwnerTakenAfterItWentIsMisdelivered) {
  using namespace std::chrono_literals;
  const PerfEvent event = PerfEvent::open(switch_watermark_attr(1), 0, -1);
  // We are alive, so the kernel takes us: what a kernel that takes a gone owner does.
  EXPECT_THROW(event.refuse_gone_owner(getpid(), PerfEvent::Owner::kProcess, 20ms), Misdelivered);
  EXPECT_THROW(event.refuse_gone_owner(gettid(), PerfEvent::Owner::kThread, 20ms), Misdelivered);
}

}  // namespace
}  // namespace sigwake
