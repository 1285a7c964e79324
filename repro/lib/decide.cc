#include "decide.h"

namespace sigwake {

void decide_watermark_signal(Report& report, const Seen& seen, const std::string& records_are) {
  if (seen.records == 0) return report.decide(Verdict::kNoRecord, "our trigger ran, the kernel wrote no " + records_are);
  // A signal without the wakeup is not what the watermark promises: poll() and epoll users would sleep.
  if (!seen.woken) {
    return report.decide(Verdict::kNoWakeup, records_are + " past the watermark, poll() never reported POLLIN" +
                                                 (seen.signals > 0 ? " (though " + std::to_string(seen.signals) +
                                                                         " signal(s) came)" : ""));
  }
  if (seen.signals > 0) return report.decide(Verdict::kDelivered);
  report.decide(Verdict::kNotDelivered, records_are + " written and POLLIN reported, no signal within the grace");
}

void decide_overflow_signal(Report& report, const Seen& seen) {
  if (seen.records == 0) return report.decide(Verdict::kNoRecord, "our CPU time ran, no sample was written");
  if (seen.woken) {
    return report.decide(Verdict::kMisdelivered,
                         "the ring buffer woke below its watermark: the overflow path cannot be isolated");
  }
  if (seen.signals > 0) return report.decide(Verdict::kDelivered);
  report.decide(Verdict::kNotDelivered, "samples overflowed, no signal within the grace");
}

}  // namespace sigwake
