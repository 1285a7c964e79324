#include "evidence.h"

#include <poll.h>

#include <cstdio>

namespace sigwake {

int add_record_evidence(Report& report, const RecordRead& read) {
  std::string types;
  for (const Record& record : read.records) {
    if (!types.empty()) types += ",";
    types += record_type_name(record.type);
  }
  report.add("records", static_cast<long long>(read.records.size()));
  report.add("record_types", types.empty() ? "none" : types);
  report.add("records_truncated", read.truncated);
  return static_cast<int>(read.records.size());
}

void add_poll_evidence(Report& report, short revents) {
  char hex[16];
  std::snprintf(hex, sizeof hex, "0x%x", static_cast<unsigned>(static_cast<unsigned short>(revents)));
  report.add("pollin", (revents & POLLIN) != 0);
  report.add("poll_revents", hex);
}

void add_signal_evidence(Report& report, const SignalCapture& capture, const std::string& prefix) {
  report.add(prefix + "signals", static_cast<long long>(capture.count()));
  const auto deliveries = capture.deliveries();
  if (deliveries.empty()) return;
  const Delivery& first = deliveries.front();
  char band[24];
  std::snprintf(band, sizeof band, "0x%lx", static_cast<unsigned long>(first.band));
  report.add(prefix + "si_signo", static_cast<long long>(first.signo));
  report.add(prefix + "si_code", static_cast<long long>(first.code));
  report.add(prefix + "si_band", band);
  report.add(prefix + "si_fd", static_cast<long long>(first.fd));
  report.add(prefix + "signal_tid", static_cast<long long>(first.tid));
}

}  // namespace sigwake
