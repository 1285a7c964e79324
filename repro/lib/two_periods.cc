#include "two_periods.h"

#include <sys/ioctl.h>

#include <cstdint>
#include <string>

#include "attrs.h"
#include "errors.h"
#include "records.h"
#include "ring_buffer.h"

namespace sigwake {

bool fault_spanning_two_periods(const PerfEvent& event, const AnonymousPage& page, int refresh) {
  constexpr unsigned kControlPagesLog2 = 0;  // room for far more than two 16-byte samples
  const PerfEvent control = PerfEvent::open(fault_address_attr(ring_data_bytes(kControlPagesLog2)), 0, -1);
  RingBuffer ring = RingBuffer::map(control.fd(), kControlPagesLog2);
  std::uint64_t period = 2;
  control.enable();
  if (refresh > 0) {
    check(ioctl(event.fd(), PERF_EVENT_IOC_REFRESH, refresh) == 0, "PERF_EVENT_IOC_REFRESH");
  } else {
    event.enable();
  }
  // The control's change first: a switch after it cleans the control too, which then never shows two periods
  // the event lacks.
  check(ioctl(control.fd(), PERF_EVENT_IOC_PERIOD, &period) == 0, "PERF_EVENT_IOC_PERIOD (the control)");
  check(ioctl(event.fd(), PERF_EVENT_IOC_PERIOD, &period) == 0, "PERF_EVENT_IOC_PERIOD");
  *reinterpret_cast<volatile char*>(page.address()) = 1;
  event.disable();
  control.disable();
  return samples_of_fault(ring.consume(), page.address()) == 2;
}

void attempt_two_periods(const std::function<bool(int attempt)>& attempt) {
  constexpr int kAttempts = 5;
  for (int n = 1; n <= kAttempts; ++n) {
    if (attempt(n)) return;
  }
  throw ReproError("no fault spanned two periods in " + std::to_string(kAttempts) +
                   " attempts (the control event saw otherwise): the case never reached its path");
}

}  // namespace sigwake
