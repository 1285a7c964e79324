// PERF_RECORD_KSYMBOL: a BPF program's load (and unload) is told to every event
// with attr.ksymbol as one record per symbol (perf_event_ksymbol() in
// kernel/events/core.c, for each event through perf_iterate_sb()). With
// sample_id_all each event's copy ends in that event's own id sample, so every
// record is exactly: header, addr, len, ksym_type, flags, the name padded to 8
// bytes, then the id sample (PERF_SAMPLE_TID | PERF_SAMPLE_TIME: 16 bytes).
//  - bpf_ksymbol_record_size: two such events, a program loaded: every KSYMBOL
//    record in either ring has that size. Until b9d1fdc6f4ac the record's one
//    shared header grew by each event's id sample in turn, so the copies of the
//    event told later were longer than what was written into them.
//  - bpf_ksymbol_subprog_name: a program whose work is a bpf-to-bpf call, loaded
//    with a JIT: its main function and its subprogram each get a KSYMBOL record
//    named after itself. Until 47df8a2f78bc perf_event_bpf_emit_ksymbols() named
//    every subprogram's record after the main program. Only a JIT splits a
//    program into functions and names their symbols: a kernel without one
//    (net.core.bpf_jit_enable 0 or absent) cannot tell, nor one whose program
//    has no BTF function names (the verifier then names a subprogram "F"):
//    `unsupported`.
#include <bpf/libbpf.h>

#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "bpf/bpf_output.skel.h"
#include "bpf/subprog_call.skel.h"
#include "lib/attrs.h"
#include "lib/bpf_load.h"
#include "lib/evidence.h"
#include "lib/repro.h"

namespace sigwake {
namespace {

constexpr std::size_t kNameAt = sizeof(perf_event_header) + 8 + 4 + 2 + 2;  // addr, len, ksym_type, flags
constexpr std::size_t kIdSample = 16;                                       // PERF_SAMPLE_TID | PERF_SAMPLE_TIME

perf_event_attr ksymbol_attr() {
  perf_event_attr attr = sideband_attr(PERF_SAMPLE_TID | PERF_SAMPLE_TIME);
  attr.ksymbol = 1;
  return attr;
}

// The name a KSYMBOL record carries.
std::string ksymbol_name(const Record& record) {
  const char* name = reinterpret_cast<const char*>(record.bytes.data() + kNameAt);
  return {name, strnlen(name, record.bytes.size() - kNameAt)};
}

// The KSYMBOL records of one ring: how many, and how many are not the size their name gives.
struct Sizes {
  int records = 0, wrong = 0, lost = 0;
  std::string first_wrong;
};

Sizes ksymbol_sizes(const RecordRead& read) {
  Sizes s;
  for (const Record& record : read.records) {
    s.lost += record.type == PERF_RECORD_LOST;
    if (record.type != PERF_RECORD_KSYMBOL || record.bytes.size() < kNameAt + 1) continue;
    ++s.records;
    const std::string name = ksymbol_name(record);
    const std::size_t expected = kNameAt + (name.size() + 1 + 7) / 8 * 8 + kIdSample;
    if (record.bytes.size() != expected && s.wrong++ == 0) {
      s.first_wrong = name + ": " + std::to_string(record.bytes.size()) + " bytes, not " + std::to_string(expected);
    }
  }
  return s;
}

// How many KSYMBOL records of a load (registrations) are named after `function` (bpf_prog_<tag>_<function>).
int registered_as(const RecordRead& read, std::string_view function) {
  int named = 0;
  for (const Record& record : read.records) {
    if (record.type != PERF_RECORD_KSYMBOL || record.bytes.size() < kNameAt + 1) continue;
    std::uint16_t flags = 0;
    std::memcpy(&flags, record.bytes.data() + kNameAt - sizeof flags, sizeof flags);
    if (flags & PERF_RECORD_KSYMBOL_FLAGS_UNREGISTER) continue;
    named += ksymbol_name(record).ends_with("_" + std::string(function));
  }
  return named;
}

}  // namespace

SIGWAKE_CASE(bpf_ksymbol_record_size,
             {.expected = {bpf_needs_privilege(),
                           fixed_by("b9d1fdc6f4ac", Verdict::kWrongCount, Verdict::kMeasured,
                                    "b9d1fdc6f4ac \"perf: Replace perf_event_header__init_id with full header init\" "
                                    "(stable 6.12.113 and 7.2.10, as Debian's changelogs place it; not in 6.1.192; "
                                    "its upstream release is not confirmed here): perf_event_ksymbol_output() in "
                                    "kernel/events/core.c sizes each event's copy afresh; before, "
                                    "perf_event_header__init_id() added every event's id sample to the one shared "
                                    "header")
                               .backported({"6.12.113", "7.2.10"})},
              .defining = {"wrong_sized"},
              .shown = {"ksymbol_records", "wrong_sized"},
              .kconfig = kBpfConfig + Words{"CONFIG_NET"}}) {
  PerfEvent first = PerfEvent::open(ksymbol_attr(), 0, -1);
  PerfEvent second = PerfEvent::open(ksymbol_attr(), 0, -1);
  RingBuffer first_ring = RingBuffer::map(first.fd(), 2);
  RingBuffer second_ring = RingBuffer::map(second.fd(), 2);
  {
    const Skeleton<bpf_output_bpf, bpf_output_bpf__open, bpf_output_bpf__load, bpf_output_bpf__destroy> loaded(
        report, BPF_PROG_TYPE_RAW_TRACEPOINT);
  }  // loaded and unloaded: a KSYMBOL record each way, in both rings
  const RecordRead a = first_ring.consume(), b = second_ring.consume();
  if (a.truncated || b.truncated) throw ReproError("a ring held a truncated record");
  const Sizes sa = ksymbol_sizes(a), sb = ksymbol_sizes(b);
  report.add("ksymbol_records", static_cast<long long>(sa.records + sb.records));
  report.add("wrong_sized", static_cast<long long>(sa.wrong + sb.wrong));
  report.add("wrong_sized_by_ring", std::to_string(sa.wrong) + "," + std::to_string(sb.wrong));  // the bug: one ring's
  if (sa.lost + sb.lost > 0) throw ReproError("a ring lost records: 4 data pages were too few");
  if (sa.records == 0 || sb.records == 0) {
    return report.decide(Verdict::kNoRecord, "a BPF program loaded and unloaded; a ksymbol event got no KSYMBOL record");
  }
  if (sa.records != sb.records) {
    return report.decide(Verdict::kWrongCount, "the two events were told " + std::to_string(sa.records) + " and " +
                                               std::to_string(sb.records) + " KSYMBOL records of the same loads");
  }
  if (sa.wrong + sb.wrong > 0) {
    return report.decide(Verdict::kWrongCount, std::to_string(sa.wrong + sb.wrong) + " KSYMBOL records not the size "
                                               "their name and id sample give (" +
                                               (sa.wrong ? sa.first_wrong : sb.first_wrong) + ")");
  }
  report.decide(Verdict::kMeasured, "every KSYMBOL record in both rings is the size its name and id sample give");
}

SIGWAKE_CASE(bpf_ksymbol_subprog_name,
             {.expected = {bpf_needs_privilege(),
                           changed_at("6.1", "47df8a2f78bc", Verdict::kWrongCount, Verdict::kMeasured,
                                      "47df8a2f78bc \"bpf, perf: Use subprog name when reporting subprog ksymbol\" "
                                      "(v6.1; stable 6.0.12 and 5.15.82): perf_event_bpf_emit_ksymbols() in "
                                      "kernel/events/core.c names each subprogram's KSYMBOL record after the "
                                      "subprogram; before, after the main program")
                               .backported({"6.0.12", "5.15.82"})},
              .defining = {"main_named", "subprog_named"},
              .shown = {"main_named", "subprog_named"},
              .kconfig = kBpfConfig + Words{"CONFIG_NET", "CONFIG_BPF_JIT"}}) {
  PerfEvent event = PerfEvent::open(ksymbol_attr(), 0, -1);
  RingBuffer ring = RingBuffer::map(event.fd(), 2);
  long jit = 0;
  std::ifstream("/proc/sys/net/core/bpf_jit_enable") >> jit;
  if (jit == 0) throw Unsupported("no BPF JIT (net.core.bpf_jit_enable 0 or absent): no subprogram symbols to name");
  {
    const Skeleton<subprog_call_bpf, subprog_call_bpf__open, subprog_call_bpf__load, subprog_call_bpf__destroy>
        loaded(report, BPF_PROG_TYPE_RAW_TRACEPOINT);
  }
  const RecordRead read = ring.consume();
  if (read.truncated) throw ReproError("the ring held a truncated record");
  if (ksymbol_sizes(read).lost > 0) throw ReproError("the ring lost records: 4 data pages were too few");
  const int main_named = registered_as(read, "calls_subprog"), subprog_named = registered_as(read, "the_subprog");
  report.add("main_named", static_cast<long long>(main_named));
  report.add("subprog_named", static_cast<long long>(subprog_named));
  if (main_named + subprog_named == 0) {
    return report.decide(Verdict::kNoRecord, "a BPF program loaded; no KSYMBOL record named after its functions");
  }
  if (main_named == 1 && subprog_named == 0) {
    throw Unsupported("no KSYMBOL record names the subprogram or repeats the main program's name: its symbol has "
                      "no function name of ours (no BTF func_info)");
  }
  if (main_named != 1 || subprog_named != 1) {
    return report.decide(Verdict::kWrongCount, std::to_string(main_named) + " KSYMBOL records named after the main "
                                               "program and " + std::to_string(subprog_named) + " after its "
                                               "subprogram, where each function gets one");
  }
  report.decide(Verdict::kMeasured, "the main program and its subprogram each got a KSYMBOL record of its own name");
}

}  // namespace sigwake
