// How many 1+1-page buffers can be mapped before the kernel says EPERM, under
// two chosen RLIMIT_MEMLOCKs a page apart (so that one of them is met exactly,
// whatever the parity of the pages charged: an off-by-one at the limit shows),
// against what the documented accounting predicts:
// `measured` when the count is the prediction, `wrong-count` when it is not.
// Root drops CAP_IPC_LOCK first, so its count is limited and predicted too (as
// for everyone, the user's perf allowance is shared by all of its processes:
// nothing else of the user's may hold perf buffers meanwhile). perf_mmap() in
// kernel/events/core.c charges each buffer's pages to the user's perf_mlock
// (locked_vm before "perf: Track the perf mlock gift separately", see
// memlock_budget_shared) up to perf_event_mlock_kb x online
// CPUs, then the rest to the process's pinned_vm up to RLIMIT_MEMLOCK; past
// that, without CAP_IPC_LOCK, mmap fails with EPERM
// (Documentation/admin-guide/perf-security.rst, "Memory allocation").
#include <linux/capability.h>
#include <linux/io_uring.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <string>
#include <utility>
#include <vector>

#include "lib/attrs.h"
#include "lib/capabilities.h"
#include "lib/evidence.h"
#include "lib/process.h"
#include "lib/repro.h"
#include "lib/sysctl.h"

namespace sigwake {
namespace {

constexpr long kChosenMemlockKb = 64;
constexpr int kMostBuffers = 256;  // where a process that may lock anything stops counting
constexpr long kPagesPerBuffer = 2;

// The accounting of perf_mmap(), buffer by buffer, in pages.
long predicted_buffers(long user_limit, long memlock_limit) {
  long user_locked = 0, pinned = 0, buffers = 0;
  while (buffers < kMostBuffers) {
    const long after = std::min(user_locked, user_limit) + kPagesPerBuffer;
    const long extra = after > user_limit ? after - user_limit : 0;
    if (pinned + extra > memlock_limit) break;
    user_locked += kPagesPerBuffer - extra;
    pinned += extra;
    ++buffers;
  }
  return buffers;
}

// RLIMIT_MEMLOCK, soft and hard, for this process.
void limit_memlock_kb(long kb) {
  const rlimit chosen{static_cast<rlim_t>(kb * 1024), static_cast<rlim_t>(kb * 1024)};
  check(setrlimit(RLIMIT_MEMLOCK, &chosen) == 0, "setrlimit(RLIMIT_MEMLOCK)");
}

// Maps buffers until the kernel refuses one (or the cap); returns how many, and why it stopped.
std::pair<long, std::string> map_until_refused() {
  std::vector<PerfEvent> events;
  std::vector<RingBuffer> rings;
  events.reserve(kMostBuffers);
  rings.reserve(kMostBuffers);
  while (static_cast<int>(rings.size()) < kMostBuffers) {
    events.push_back(PerfEvent::open(switch_watermark_attr(1), 0, -1));
    try {
      rings.push_back(RingBuffer::map(events.back().fd(), 0));
    } catch (const Unsupported& refused) {
      return {static_cast<long>(rings.size()), refused.what()};
    }
  }
  return {static_cast<long>(rings.size()), "nothing up to the cap"};
}  // every buffer is unmapped and closed here: the next count starts from nothing

constexpr char kMlockKb[] = "kernel/perf_event_mlock_kb";

long read_mlock_kb() { return read_sysctl(kMlockKb); }

// An io_uring instance: the other RLIMIT_MEMLOCK user whose registered buffers the kernel charges to the
// user's locked_vm (__io_account_mem() in io_uring/rsrc.c), when its creator lacks CAP_IPC_LOCK.
class IoUring {
 public:
  IoUring() {
    io_uring_params params{};
    fd_ = static_cast<int>(syscall(__NR_io_uring_setup, 1, &params));
    if (fd_ < 0 && (errno == ENOSYS || errno == EPERM)) throw Unsupported(errno_text("io_uring_setup"));
    check(fd_ >= 0, "io_uring_setup");
  }
  IoUring(const IoUring&) = delete;
  IoUring& operator=(const IoUring&) = delete;
  ~IoUring() { close(fd_); }

  // Registers `pages` pages of fresh anonymous memory as a fixed buffer: 0, or the errno; unregistered again.
  int register_pages(long pages) const {
    const std::size_t bytes = static_cast<std::size_t>(pages * sysconf(_SC_PAGESIZE));
    void* memory = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    check(memory != MAP_FAILED, "mmap(the buffer to register)");
    iovec buffer{.iov_base = memory, .iov_len = bytes};
    const bool registered = syscall(__NR_io_uring_register, fd_, IORING_REGISTER_BUFFERS, &buffer, 1) == 0;
    const int err = registered ? 0 : errno;
    if (registered) check(syscall(__NR_io_uring_register, fd_, IORING_UNREGISTER_BUFFERS, nullptr, 0) == 0,
                          "io_uring_register(IORING_UNREGISTER_BUFFERS)");
    check(munmap(memory, bytes) == 0, "munmap(the registered buffer)");
    return err;
  }

 private:
  int fd_ = -1;
};

}  // namespace

SIGWAKE_CASE(memlock_budget, {.expected = {always(Verdict::kMeasured,
                                     "perf_mmap() in kernel/events/core.c charges perf_event_mlock_kb x online CPUs "
                                     "per user, then RLIMIT_MEMLOCK per process, and refuses (EPERM) past both "
                                     "without CAP_IPC_LOCK (Documentation/admin-guide/perf-security.rst): the count "
                                     "equals that accounting's prediction")},
              .defining = {"buffers", "predicted_buffers", "buffers_at_68kb"},
              .shown = {"buffers", "predicted_buffers"},
              .kconfig = kPerfConfig}) {
  drop_effective(CAP_IPC_LOCK);  // it lifts the RLIMIT_MEMLOCK check
  const long mlock_kb = read_mlock_kb();
  const long page_kb = sysconf(_SC_PAGESIZE) / 1024;
  const long cpus = sysconf(_SC_NPROCESSORS_ONLN);
  report.add("perf_event_mlock_kb", static_cast<long long>(mlock_kb));
  report.add("online_cpus", static_cast<long long>(cpus));

  std::string wrong;
  // The larger limit first: an unprivileged process may lower its hard limit, not raise it.
  for (const long limit_kb : {kChosenMemlockKb + page_kb, kChosenMemlockKb}) {
    limit_memlock_kb(limit_kb);
    const auto [buffers, stopped_by] = map_until_refused();
    const long predicted = predicted_buffers(mlock_kb / page_kb * cpus, limit_kb / page_kb);
    const std::string at = limit_kb == kChosenMemlockKb ? "" : "_at_" + std::to_string(limit_kb) + "kb";
    report.add("buffers" + at, static_cast<long long>(buffers));
    report.add("predicted_buffers" + at, static_cast<long long>(predicted));
    report.add("stopped_by" + at, stopped_by);
    if (buffers != predicted) {
      wrong += (wrong.empty() ? "" : "; ") + std::to_string(buffers) + " buffers under RLIMIT_MEMLOCK " +
               std::to_string(limit_kb) + " KiB where perf_mmap()'s accounting allows " + std::to_string(predicted);
    }
  }
  report.add("rlimit_memlock_kb", static_cast<long long>(kChosenMemlockKb));
  if (wrong.empty()) return report.decide(Verdict::kMeasured);
  report.decide(Verdict::kWrongCount, wrong);
}

// perf_event_mlock_kb lowered below what the user has mapped: the next buffer is charged its own pages to
// pinned_vm (the user's share counts only up to the new limit), so under RLIMIT_MEMLOCK 64 KiB it still maps.
// The user holds up to 64 pages first, within perf_event_mlock_kb: a kernel that charges the excess too
// (held + 2 - one page per CPU) then exceeds RLIMIT_MEMLOCK (16 pages of 4 KiB, 4 of 16 KiB) on any machine
// of fewer CPUs than that excess.
SIGWAKE_CASE(memlock_budget_lowered,
             {.expected = {root_writes("perf_event_mlock_kb"), booted_machine_only("perf_event_mlock_kb"),
                           changed_at("5.6", "003461559ef7", Verdict::kWrongCount, Verdict::kMeasured,
                                      "003461559ef7 \"perf/core: Fix mlock accounting in perf_mmap()\" (v5.6; "
                                      "stable 5.4.19): perf_mmap() in kernel/events/core.c counts the user's locked "
                                      "pages only up to a perf_event_mlock_kb lowered below them, so a new buffer "
                                      "charges pinned_vm its own pages; before, the whole excess too, and it was "
                                      "refused (EPERM)")
                               .backported({"5.4.19"})},
              .defining = {"mapped_after_lowering"},
              .shown = {"mapped_after_lowering"},
              .kconfig = kPerfConfig}) {
  drop_effective(CAP_IPC_LOCK);
  const long page_kb = sysconf(_SC_PAGESIZE) / 1024;
  const long cpus = sysconf(_SC_NPROCESSORS_ONLN);
  limit_memlock_kb(kChosenMemlockKb);
  const long held = std::min(32L, read_mlock_kb() / page_kb * cpus / kPagesPerBuffer);  // buffers, all the user's
  if (held * kPagesPerBuffer + kPagesPerBuffer - cpus <= kChosenMemlockKb / page_kb) {
    throw Unsupported("perf_event_mlock_kb leaves the user too few pages to tell the two accountings apart here");
  }
  std::vector<PerfEvent> events;
  std::vector<RingBuffer> rings;
  for (long i = 0; i < held; ++i) {  // within the user's allowance: none of it charged to pinned_vm
    events.push_back(PerfEvent::open(switch_watermark_attr(1), 0, -1));
    rings.push_back(RingBuffer::map(events.back().fd(), 0));
  }
  if (!in_sigwake_guest()) throw Unsupported("changes perf_event_mlock_kb machine-wide: only on a machine sigwake booted");
  const SysctlFor lowered(kMlockKb, page_kb);  // one page per CPU: far below the pages we hold
  events.push_back(PerfEvent::open(switch_watermark_attr(1), 0, -1));
  std::string refused;
  try {
    rings.push_back(RingBuffer::map(events.back().fd(), 0));
  } catch (const Unsupported& e) {
    refused = e.what();
  }
  report.add("buffers_before", static_cast<long long>(held));
  report.add("mapped_after_lowering", refused.empty());
  if (!refused.empty()) {
    return report.decide(Verdict::kWrongCount, "a " + std::to_string(kPagesPerBuffer) + "-page buffer refused once "
                                               "perf_event_mlock_kb was lowered below the pages mapped: " + refused);
  }
  report.decide(Verdict::kMeasured, "a buffer mapped after perf_event_mlock_kb was lowered: charged its own pages");
}

// Perf's allowance is its own: buffers within perf_event_mlock_kb are charged to the user's perf_mlock, not to
// the locked_vm io_uring charges its registered buffers to against RLIMIT_MEMLOCK. Holding more perf pages
// than RLIMIT_MEMLOCK (64 KiB) allows, all within perf's allowance, an io_uring buffer of half that limit must
// still register. An oversized one (the limit and a page) must not: the control that io_uring charges us at
// all (it must fail whether or not perf's pages are counted). Seen: refused on Debian's 6.12.95 and this
// machine's 6.18.44, registered on 6.1.192, 6.12.118 and 7.2.13.
SIGWAKE_CASE(memlock_budget_shared,
             {.expected = {fixed_by("", Verdict::kWrongCount, Verdict::kMeasured,
                                    "\"perf: Track the perf mlock gift separately\" (stable 6.1.192, 6.12.115 and "
                                    "7.2.13, as Debian's changelogs place it; its upstream commit is not confirmed "
                                    "here): perf_mmap() in kernel/events/core.c charges the perf_event_mlock_kb "
                                    "allowance to user->perf_mlock; before, to user->locked_vm, which io_uring's "
                                    "__io_account_mem() holds to RLIMIT_MEMLOCK, so perf buffers shrank it")
                               .backported({"6.1.192", "6.12.115", "7.2.13"})},
              .defining = {"registered_with_perf_pages", "oversized_registered"},
              .shown = {"perf_pages_held", "registered_with_perf_pages"},
              .kconfig = {"CONFIG_PERF_EVENTS", "CONFIG_IO_URING"}}) {
  drop_effective(CAP_IPC_LOCK);  // with it, io_uring charges nothing to locked_vm (ctx->user stays unset)
  limit_memlock_kb(kChosenMemlockKb);
  const long page_kb = sysconf(_SC_PAGESIZE) / 1024;
  const long limit_pages = kChosenMemlockKb / page_kb;
  const long held = limit_pages / kPagesPerBuffer + 1;  // more pages than RLIMIT_MEMLOCK allows
  if (limit_pages < 2) throw Unsupported("RLIMIT_MEMLOCK 64 KiB is less than two pages here");
  if (held * kPagesPerBuffer > read_mlock_kb() / page_kb * sysconf(_SC_NPROCESSORS_ONLN)) {
    throw Unsupported("perf_event_mlock_kb allows fewer pages than RLIMIT_MEMLOCK 64 KiB here");
  }
  std::vector<PerfEvent> events;  // opened first: a kernel closed to perf says so before io_uring is asked
  for (long i = 0; i < held; ++i) events.push_back(PerfEvent::open(switch_watermark_attr(1), 0, -1));
  const IoUring ring;  // set up before perf's pages are held: newer kernels (6.18 here) charge its rings too
  const int oversized = ring.register_pages(limit_pages + 1);
  report.add("oversized_registered", std::string(oversized == 0 ? "yes" : errno_name(oversized)));
  if (oversized == 0) {
    throw Unsupported("io_uring registered more than RLIMIT_MEMLOCK: it charges this task nothing here");
  }
  if (oversized != ENOMEM) throw ReproError("io_uring_register(an oversized buffer): " + errno_name(oversized));
  std::vector<RingBuffer> rings;
  for (const PerfEvent& event : events) rings.push_back(RingBuffer::map(event.fd(), 0));
  const int err = ring.register_pages(limit_pages / 2);
  report.add("perf_pages_held", static_cast<long long>(held * kPagesPerBuffer));
  report.add("registered_with_perf_pages", std::string(err == 0 ? "yes" : errno_name(err)));
  if (err == ENOMEM) {
    return report.decide(Verdict::kWrongCount, "an io_uring buffer of half RLIMIT_MEMLOCK refused (ENOMEM) while "
                                               "perf buffers within perf_event_mlock_kb were mapped: perf's pages "
                                               "counted in the user's locked_vm");
  }
  if (err != 0) throw ReproError("io_uring_register(IORING_REGISTER_BUFFERS): " + errno_name(err));
  report.decide(Verdict::kMeasured, "perf buffers within their allowance left io_uring's RLIMIT_MEMLOCK alone");
}

}  // namespace sigwake
