#include "facts.h"

#include <cstdio>

#include "report.h"

namespace sigwake {

Expectation Expectation::in_passes(Words p) const {
  Expectation e = *this;
  e.passes = std::move(p);
  return e;
}

Expectation Expectation::of_origins(Words o) const {
  Expectation e = *this;
  e.origins = std::move(o);
  return e;
}

Expectation Expectation::backported(Words releases) const {
  Expectation e = *this;
  e.stable = std::move(releases);
  return e;
}

Expectation always(Verdict verdict, std::string source) {
  return {.before = verdict, .after = verdict, .source = std::move(source)};
}

Expectation changed_at(std::string_view since, std::string_view commit, Verdict before, Verdict after,
                       std::string source) {
  return {.before = before, .after = after, .since = since, .commit = commit, .source = std::move(source)};
}

Expectation fixed_by(std::string_view commit, Verdict before, Verdict after, std::string source) {
  return {.before = before, .after = after, .commit = commit, .source = std::move(source)};
}

Words operator+(Words a, const Words& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

Expectation watermark_fix() {
  return changed_at("6.10", "fd20bb51ed39", Verdict::kNotDelivered, Verdict::kDelivered,
                    "fd20bb51ed39 \"perf/ring_buffer: Trigger IO signals for watermark_wakeup\" (v6.10): before it, "
                    "perf_output_wakeup() in kernel/events/ring_buffer.c woke poll waiters without setting "
                    "pending_kill; these cases' signals come from that watermark path");
}

Expectation overflow_signal() {
  return always(Verdict::kDelivered,
                "__perf_event_overflow() in kernel/events/core.c sets pending_kill = POLL_IN for every sample overflow "
                "and queues the wakeup itself, with no ring-buffer wakeup (these cases' rings never reach their "
                "watermark); F_SETOWN_EX/F_OWNER_TID (Linux 2.6.32, fcntl(2)) directs send_sigio() to one thread, and "
                "with F_SETSIG send_sigio_to_task() in fs/fcntl.c fills si_code, si_band and si_fd; "
                "PERF_EVENT_IOC_REFRESH arms event_limit, whose last overflow sets pending_kill = POLL_HUP and disables "
                "the event (perf_event_open(2)); a sample's group read (PERF_SAMPLE_READ, PERF_FORMAT_GROUP) reads "
                "every other member afresh (perf_output_read_group(), unless the PMU read the group itself: "
                "handle->skip_read); a software event counted where it happens (page faults: perf_sw_event() -> "
                "do_perf_sw_event(), inside perf_swevent_get_recursion_context()) overflows at every sample period the "
                "same way");
}

Expectation bpf_needs_privilege() {
  return always(Verdict::kUnsupported,
                "CONFIG_BPF_UNPRIV_DEFAULT_OFF (upstream's default since v5.16, 8a03e56b253e \"bpf: Disallow "
                "unprivileged bpf by default\"; Debian's too) sets kernel.unprivileged_bpf_disabled=2: loading a BPF "
                "program needs CAP_BPF or CAP_SYS_ADMIN (EPERM; the reason names the sysctl's value)")
      .in_passes(kUserPasses);
}

Expectation root_writes(std::string_view setting) {
  return always(Verdict::kUnsupported, "only root may write " + std::string(setting)).in_passes(kUserPasses);
}

Expectation booted_machine_only(std::string_view setting) {
  return always(Verdict::kUnsupported, "the case changes " + std::string(setting) + ", a machine-wide setting: only "
                                       "on a machine sigwake booted")
      .of_origins({"host"});
}

namespace {

std::string quoted(std::string_view text) {
  std::string out = "\"";
  for (const char c : text) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      char escaped[8];
      std::snprintf(escaped, sizeof escaped, "\\u%04x", c);
      out += escaped;
    } else {
      out += c;
    }
  }
  return out + "\"";
}

std::string list(const Words& words) {
  std::string out = "[";
  for (const std::string_view w : words) out += (out.size() > 1 ? ", " : "") + quoted(w);
  return out + "]";
}

std::string optional(std::string_view text) { return text.empty() ? "null" : quoted(text); }

std::string expectation_json(const Expectation& e) {
  return "{\"before\": " + quoted(verdict_name(e.before)) + ", \"after\": " + quoted(verdict_name(e.after)) +
         ", \"since\": " + optional(e.since) + ", \"commit\": " + optional(e.commit) + ", \"stable\": " + list(e.stable) +
         ", \"source\": " + quoted(e.source) + ", \"passes\": " + (e.passes.empty() ? "null" : list(e.passes)) +
         ", \"origins\": " + (e.origins.empty() ? "null" : list(e.origins)) + "}";
}

}  // namespace

std::string facts_json(const std::vector<NamedFacts>& cases) {
  std::string out = "{\"schema\": 5, \"cases\": [";
  for (const NamedFacts& c : cases) {
    std::string expected = "[";
    for (const Expectation& e : c.facts->expected) expected += (expected.size() > 1 ? ", " : "") + expectation_json(e);
    out += (c.name == cases.front().name ? "\n " : ",\n ") + std::string("{\"name\": ") + quoted(c.name) +
           ", \"expected\": " + expected + "], \"defining\": " + list(c.facts->defining) +
           ", \"shown\": " + list(c.facts->shown) + ", \"kconfig\": " + list(c.facts->kconfig) +
           ", \"peers\": " + list(c.facts->peers) + ", \"cpus\": " + std::to_string(c.facts->cpus) + "}";
  }
  return out + "]}\n";
}

}  // namespace sigwake
