// A software event has no AUX area (the PMU's own trace buffer, which only a
// PMU with setup_aux, such as intel_pt, fills). With the data ring mapped and
// its user page naming an AUX area just past it, mmap() of that area goes to
// perf_mmap()'s AUX branch in kernel/events/core.c, which must hand the area to
// rb_alloc_aux(): -EOPNOTSUPP, for the event's PMU cannot fill one. A kernel
// that took the AUX mapping for a data ring's would allocate a second ring and
// attach it over the first one. `measured` when refused with EOPNOTSUPP;
// `misdelivered` when it was mapped.
//  - aux_area_without_aux_pmu
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>

#include "lib/attrs.h"
#include "lib/repro.h"

namespace sigwake {

SIGWAKE_CASE(aux_area_without_aux_pmu,
             {.expected = {always(Verdict::kMeasured,
                                  "45bfb2e50471 \"perf: Add AUX area to ring buffer for raw data streams\" (v4.1): "
                                  "perf_mmap() maps a page offset past the data ring as the AUX area "
                                  "(rb_alloc_aux() in kernel/events/ring_buffer.c), which a PMU without setup_aux "
                                  "refuses with EOPNOTSUPP (has_aux())")},
              .defining = {"aux_mmap"},
              .shown = {"aux_mmap"},
              .kconfig = kPerfConfig}) {
  const PerfEvent event = PerfEvent::open(switch_watermark_attr(1), 0, -1);
  const RingBuffer ring = RingBuffer::map(event.fd(), 0);
  const std::size_t page = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
  auto* user_page = reinterpret_cast<perf_event_mmap_page*>(ring.base());
  user_page->aux_offset = ring.length();  // just past the data ring, one page: what the AUX branch accepts
  user_page->aux_size = page;
  void* aux = mmap(nullptr, page, PROT_READ | PROT_WRITE, MAP_SHARED, event.fd(), static_cast<off_t>(ring.length()));
  const int err = aux == MAP_FAILED ? errno : 0;
  report.add("aux_mmap", std::string(aux == MAP_FAILED ? strerrorname_np(err) : "mapped"));
  if (aux != MAP_FAILED) {
    munmap(aux, page);
    return report.decide(Verdict::kMisdelivered, "an AUX area was mapped for a software event, whose PMU has none");
  }
  if (err == EPERM) throw Unsupported("mmap() of the AUX area: EPERM (the locked-memory budget), as RingBuffer::map");
  if (err != EOPNOTSUPP) throw ReproError(std::string("mmap() of the AUX area: ") + strerror(err));
  report.decide(Verdict::kMeasured, "the AUX area refused (EOPNOTSUPP): the event's PMU has none");
}

}  // namespace sigwake
