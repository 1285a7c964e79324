#include "fixture.h"

#include <utility>

#include "errors.h"

namespace sigwake {

SwitchFixture::SwitchFixture(const perf_event_attr& attr, Scope scope, std::function<void()> after_resume)
    : child(std::move(after_resume)),
      event(PerfEvent::open(attr, scope == Scope::kCpu0 ? -1 : child.pid(), scope == Scope::kChild ? -1 : 0)),
      ring(RingBuffer::map(event.fd(), 0)) {}

short SwitchFixture::trigger(std::chrono::milliseconds wait, const std::function<void()>& once_polled) {
  event.enable();
  child.resume();  // it runs once we sleep in poll
  const short revents = wait_readable(event.fd(), wait, poll_events);
  if (once_polled) once_polled();
  if (!child.ran(kWakeupBudget)) throw ReproError("the monitored child never ran");
  return revents;
}

}  // namespace sigwake
