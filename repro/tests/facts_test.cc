// A case's facts as `PROGRAM --list --json` prints them: quoting that survives
// any source text, and the shape the harness's schema asks for.
#include "../lib/facts.h"

#include <gtest/gtest.h>

namespace sigwake {
namespace {

TEST(Facts, QuotesAndControlCharactersAreEscaped) {
  const Facts facts{.expected = {always(Verdict::kDelivered, "a \"quoted\" commit\\path\tand tab")}};
  const std::string json = facts_json({{"a_case", &facts}});
  EXPECT_NE(json.find(R"("source": "a \"quoted\" commit\\path\u0009and tab")"), std::string::npos) << json;
}

TEST(Facts, EveryFieldIsPrintedAndUnsetOnesAreNull) {
  const Facts facts{.expected = {watermark_fix().in_passes({"root"}).backported({"6.6.30"}), bpf_needs_privilege()},
                    .defining = kSiginfoEvidence + Words{"crossings"},
                    .shown = {"records"},
                    .kconfig = kPerfConfig,
                    .peers = {"watermark_signal"},
                    .cpus = 2};
  const std::string json = facts_json({{"one", &facts}, {"two", &facts}});
  EXPECT_EQ(json.rfind(R"({"schema": 5, "cases": [)", 0), 0u) << json;
  EXPECT_NE(json.find(R"("before": "not-delivered", "after": "delivered", "since": "6.10", "commit": "fd20bb51ed39", "stable": ["6.6.30"])"),
            std::string::npos);
  EXPECT_NE(json.find(R"("passes": ["root"], "origins": null})"), std::string::npos);
  EXPECT_NE(json.find(R"("since": null, "commit": null, "stable": [])"), std::string::npos);
  EXPECT_NE(json.find(R"("defining": ["si_signo", "si_code", "si_band", "crossings"])"), std::string::npos);
  EXPECT_NE(json.find(R"("kconfig": ["CONFIG_PERF_EVENTS"], "peers": ["watermark_signal"], "cpus": 2})"),
            std::string::npos);
  EXPECT_NE(json.find(R"({"name": "two")"), std::string::npos);
  EXPECT_EQ(json.substr(json.size() - 3), "]}\n");
}

TEST(Facts, AFixNoReleaseDatesHasNoSinceAndItsBugAsBefore) {
  const Facts facts{.expected = {fixed_by("357e8a77a501", Verdict::kMisdelivered, Verdict::kMeasured, "stable only")
                                     .backported({"6.12.113"})}};
  const std::string json = facts_json({{"fix", &facts}});
  EXPECT_NE(json.find(R"("before": "misdelivered", "after": "measured", "since": null, "commit": "357e8a77a501", "stable": ["6.12.113"])"),
            std::string::npos) << json;
}

}  // namespace
}  // namespace sigwake
