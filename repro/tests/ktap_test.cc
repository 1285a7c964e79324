// The KTAP document a reproducer prints, for every verdict.
#include <gtest/gtest.h>

#include "../lib/ktap.h"

namespace sigwake {
namespace {

TEST(Ktap, DeliveredIsOkWithEvidence) {
  Report report("watermark_sigio");
  report.add("signals", 1LL);
  report.add("pollin", true);
  report.decide(Verdict::kDelivered);
  EXPECT_EQ(ktap_document({report}),
            "KTAP version 1\n1..1\n# signals=1\n# pollin=1\n# verdict=delivered\nok 1 watermark_sigio\n");
  EXPECT_EQ(exit_code(report.verdict()), 0);
}

TEST(Ktap, NotDeliveredIsNotOkWithReason) {
  Report report("watermark_sigio");
  report.decide(Verdict::kNotDelivered, "no SIGIO");
  EXPECT_EQ(ktap_document({report}), "KTAP version 1\n1..1\n# verdict=not-delivered\n# reason=no SIGIO\nnot ok 1 watermark_sigio\n");
  EXPECT_EQ(exit_code(report.verdict()), 1);
}

TEST(Ktap, UnsupportedIsASkip) {
  Report report("watermark_poll");
  report.decide(Verdict::kUnsupported, "perf_event_open: EINVAL");
  EXPECT_EQ(ktap_document({report}),
            "KTAP version 1\n1..1\n# verdict=unsupported\n# reason=perf_event_open: EINVAL\n"
            "ok 1 watermark_poll # SKIP perf_event_open: EINVAL\n");
  EXPECT_EQ(exit_code(report.verdict()), 4);
}

TEST(Ktap, UndecidedIsAnError) {
  Report report("overflow_sigio");
  EXPECT_EQ(ktap_document({report}), "KTAP version 1\n1..1\n# verdict=error\nnot ok 1 overflow_sigio # ERROR \n");
  EXPECT_EQ(exit_code(report.verdict()), 1);
}

TEST(Ktap, LineBreaksCannotEscapeADiagnostic) {
  Report report("x");
  report.add("path", "a\nnot ok 9 forged");
  report.decide(Verdict::kError, "bad\nok 1 x");
  const std::string text = ktap_document({report});
  EXPECT_NE(text.find("# path=a not ok 9 forged\n"), std::string::npos);
  EXPECT_EQ(text.find("\nok 1 x"), std::string::npos);
}

TEST(Ktap, SeveralCasesAreNumberedWithTheirOwnEvidence) {
  Report overflow("setown_ex_tid_overflow");
  overflow.add("signal_tid", 12LL);
  overflow.decide(Verdict::kDelivered);
  Report watermark("setown_ex_tid_watermark");
  watermark.decide(Verdict::kNotDelivered, "no signal");
  EXPECT_EQ(ktap_document({overflow, watermark}),
            "KTAP version 1\n1..2\n"
            "# signal_tid=12\n# verdict=delivered\nok 1 setown_ex_tid_overflow\n"
            "# verdict=not-delivered\n# reason=no signal\nnot ok 2 setown_ex_tid_watermark\n");
  EXPECT_EQ(exit_code({overflow, watermark}), 1);
}

TEST(Ktap, AMeasurementIsOk) {
  Report report("memlock_budget");
  report.add("buffers", 129LL);
  report.decide(Verdict::kMeasured);
  EXPECT_EQ(ktap_document({report}), "KTAP version 1\n1..1\n# buffers=129\n# verdict=measured\nok 1 memlock_budget\n");
  EXPECT_EQ(exit_code({report}), 0);
}

TEST(Ktap, ProgramExitCodes) {
  Report skip("a"), pass("b");
  skip.decide(Verdict::kUnsupported, "EACCES");
  pass.decide(Verdict::kDelivered);
  EXPECT_EQ(exit_code({skip, skip}), 4);
  EXPECT_EQ(exit_code({skip, pass}), 0);
}

}  // namespace
}  // namespace sigwake
