// A perf ring buffer's mapping is one piece: the kernel refuses to split it
// (perf_mmap_vmops' may_split, perf_mmap_may_split() in kernel/events/core.c,
// EINVAL), for a split's halves would each be closed as the whole and unbalance
// the buffer's mmap counts and locked-memory accounting.
//  - ring_split_munmap: unmapping the last data page of a 1+2-page ring;
//  - ring_split_mprotect: making that page read-only.
// Either must fail with EINVAL and leave the mapping whole.
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <functional>
#include <string>

#include "lib/attrs.h"
#include "lib/repro.h"

namespace sigwake {
namespace {

struct Split {
  const char* call;
  std::function<int(std::byte* page, std::size_t size)> apply;
};

constexpr const char* kNoSplit =
    "b024d7b56c77 \"perf/core: Prevent VMA split of buffer mappings\" (stable 6.1.148 and 6.12.42, as Debian's "
    "changelogs; its upstream release is not confirmed here): perf_mmap_may_split() in kernel/events/core.c "
    "refuses every split of a perf buffer's mapping with EINVAL";

}  // namespace

SIGWAKE_VARIANT_CASE(ring_split, Split) {
  const PerfEvent event = PerfEvent::open(switch_watermark_attr(1), 0, -1);
  const RingBuffer ring = RingBuffer::map(event.fd(), 1);
  const std::size_t page = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
  const int rc = variant.apply(ring.base() + ring.length() - page, page);
  const int err = rc == 0 ? 0 : errno;
  report.add("split", std::string(rc == 0 ? "done" : strerrorname_np(err)));
  if (rc == 0) {
    return report.decide(Verdict::kMisdelivered, std::string(variant.call) + " split the ring's mapping, which the "
                                                                           "kernel must refuse (EINVAL)");
  }
  if (err != EINVAL) throw ReproError(std::string(variant.call) + " of the ring's last page: " + strerror(err));
  report.decide(Verdict::kMeasured, std::string(variant.call) + " refused (EINVAL): the mapping stays whole");
}

SIGWAKE_VARIANT(ring_split, munmap,
                (Split{"munmap()", [](std::byte* p, std::size_t n) { return munmap(p, n); }}),
                {.expected = {fixed_by("b024d7b56c77", Verdict::kMisdelivered, Verdict::kMeasured, kNoSplit)
                                  .backported({"6.1.148", "6.12.42"})},
                 .defining = {"split"},
                 .shown = {"split"},
                 .kconfig = kPerfConfig});

SIGWAKE_VARIANT(ring_split, mprotect,
                (Split{"mprotect(PROT_READ)", [](std::byte* p, std::size_t n) { return mprotect(p, n, PROT_READ); }}),
                {.expected = {fixed_by("b024d7b56c77", Verdict::kMisdelivered, Verdict::kMeasured, kNoSplit)
                                  .backported({"6.1.148", "6.12.42"})},
                 .defining = {"split"},
                 .shown = {"split"},
                 .kconfig = kPerfConfig});

}  // namespace sigwake
