// What a reproducer file provides; repro/lib/main.cc supplies main().
//
//   SIGWAKE_CASE(watermark_sigio, {.expected = {watermark_fix()}, .shown = kShownSignal}) {
//     ... set up, trigger, report.add(evidence) ...
//     report.decide(Verdict::kDelivered);
//   }
//
// The braces after the name are the case's facts (facts.h): what is known of
// kernels for it, with the source, and what its evidence means. A file may
// define several cases (one per path it tests); each is one KTAP test, run in
// definition order. Throwing Unsupported or ReproError decides `unsupported`
// or `error` for that case.
//
// One case body for several variants, as kselftest_harness.h's FIXTURE_VARIANT:
//
//   struct Sides { bool target; bool source; };
//   SIGWAKE_VARIANT_CASE(set_output_sigio, Sides) { ... variant.target ... }
//   SIGWAKE_VARIANT(set_output_sigio, fasync_on_target, (Sides{true, false}), {facts});
//
// registers the case set_output_sigio_fasync_on_target.
//
// What a case execs into, when it must watch a new image of its own program:
//
//   SIGWAKE_IMAGE(fault_on_cue) { ... argv[0] is the first argument after the name ...; return 0; }
//
// runs as `PROGRAM --image fault_on_cue ARGS...` and exits with what it returns.
#pragma once

#include <vector>

#include "deadline.h"
#include "errors.h"
#include "facts.h"
#include "perf_event.h"
#include "report.h"
#include "ring_buffer.h"
#include "signal_capture.h"

namespace sigwake {

using CaseFunction = void (*)(Report&);

struct Case {
  const char* name;
  CaseFunction run;
  const Facts* facts;
};

std::vector<Case>& registered_cases();

struct CaseRegistration {
  CaseRegistration(const char* name, CaseFunction run, const Facts* facts) {
    registered_cases().push_back({name, run, facts});
  }
};

using ImageFunction = int (*)(int argc, char** argv);

struct Image {
  const char* name;
  ImageFunction run;
};

std::vector<Image>& registered_images();

struct ImageRegistration {
  ImageRegistration(const char* name, ImageFunction run) { registered_images().push_back({name, run}); }
};

}  // namespace sigwake

#define SIGWAKE_CASE(name, ...)                                                              \
  static void name(::sigwake::Report& report);                                               \
  static const ::sigwake::Facts name##_facts __VA_ARGS__;                                    \
  static const ::sigwake::CaseRegistration name##_registration(#name, &name, &name##_facts); \
  static void name(::sigwake::Report& report)

#define SIGWAKE_IMAGE(name)                                                                  \
  static int name##_image(int argc, char** argv);                                            \
  static const ::sigwake::ImageRegistration name##_image_registration(#name, &name##_image); \
  static int name##_image([[maybe_unused]] int argc, [[maybe_unused]] char** argv)

#define SIGWAKE_VARIANT_CASE(base, Variant) \
  using base##_variant = Variant;           \
  static void base(::sigwake::Report& report, const Variant& variant)

#define SIGWAKE_VARIANT(base, suffix, value, ...)                                       \
  static const ::sigwake::Facts base##_##suffix##_facts __VA_ARGS__;                    \
  static const ::sigwake::CaseRegistration base##_##suffix##_registration(              \
      #base "_" #suffix,                                                                \
      [](::sigwake::Report& report) {                                                   \
        static const base##_variant variant = value;                                    \
        base(report, variant);                                                          \
      },                                                                                \
      &base##_##suffix##_facts)
