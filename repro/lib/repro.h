// What a reproducer file provides; repro/lib/main.cc supplies main().
//
//   SIGWAKE_CASE(watermark_sigio) {
//     ... set up, trigger, report.add(evidence) ...
//     report.decide(Verdict::kDelivered);
//   }
//
// A file may define several cases (one per path it tests); each is one KTAP
// test, run in definition order. Throwing Unsupported or ReproError decides
// `unsupported` or `error` for that case.
#pragma once

#include <vector>

#include "deadline.h"
#include "errors.h"
#include "perf_event.h"
#include "report.h"
#include "ring_buffer.h"
#include "signal_capture.h"

namespace sigwake {

using CaseFunction = void (*)(Report&);

struct Case {
  const char* name;
  CaseFunction run;
};

std::vector<Case>& registered_cases();

struct CaseRegistration {
  CaseRegistration(const char* name, CaseFunction run) { registered_cases().push_back({name, run}); }
};

}  // namespace sigwake

#define SIGWAKE_CASE(name)                                                       \
  static void name(::sigwake::Report& report);                                   \
  static const ::sigwake::CaseRegistration name##_registration(#name, &name);    \
  static void name(::sigwake::Report& report)
