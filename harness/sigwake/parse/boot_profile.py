"""Where a boot's seconds go, read off its console: the host's wall time from QEMU's start to its exit, cut by
the guest's kernel-log clock (printk's, which runs from the kernel's start) at the marks the guest's init says
as each run starts and ends. Every part is measured and named, so the parts sum to the boot:

  host        QEMU's start to the kernel's clock starting, and the power-off to QEMU's exit (wall - guest end)
  kernel      the kernel's start to the init (its uptime when /init ran)
  init        the init's setup before the first run (the tracer, the machine, the programs' case lists)
  <pass>      each privilege pass from its first run's start to its last run's end: the runs' own wall time
              (their processes running, and waiting: a deadline, a sleep) and the loop between them (fork,
              exec, the marks, the frames written to the console)
  between     the passes' gaps (a pass's setup: perf_event_paranoid, the next pass's lists)
  after       the last run's end to the kernel's last line (the selftests, the power-off)

A case's runs are split into CPU time (its processes', reaped by the run's end: # sigwake.cpu_us; unknown where
a runner did not say it) and the rest of their wall time, which they spent waiting; console bytes are every
byte the console carried."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from . import console, ktap

STAMP = re.compile(r"^" + console.PRINTK_STAMP, re.M)


def plus(a: float | None, b: float | None) -> float | None:
    """A sum that is unknown once any part is."""
    return None if a is None or b is None else a + b


@dataclass(frozen=True)
class CaseTime:
    wall_s: float  # its runs' wall time, summed
    cpu_s: float | None  # what their processes ran (None: a run did not say)

    @property
    def waiting_s(self) -> float | None:
        """Wall time less CPU time: below zero where its threads ran on several CPUs at once."""
        return None if self.cpu_s is None else self.wall_s - self.cpu_s


@dataclass
class PassTime:
    span_s: float  # its first run's start to its last run's end
    runs_s: float  # the runs' own wall time
    cpu_s: float | None  # what their processes ran (None: a run did not say)

    @property
    def loop_s(self) -> float:
        """The case loop's time between the runs."""
        return self.span_s - self.runs_s


@dataclass
class BootProfile:
    total_s: float  # QEMU's start to its exit, on the host's clock
    console_bytes: int
    host_s: float | None = None  # None: the guest gave no kernel-log clock, and nothing below is known
    kernel_s: float = 0.0
    init_s: float = 0.0
    passes: dict[str, PassTime] = field(default_factory=dict)
    between_s: float = 0.0
    after_s: float = 0.0
    cases: dict[str, CaseTime] = field(default_factory=dict)  # "pass/case" -> its runs' times

    def parts(self) -> dict[str, float]:
        """Each named part of the boot, in order; they sum to total_s."""
        if self.host_s is None:
            return {"unaccounted (no kernel-log clock)": self.total_s}
        return {"host": self.host_s, "kernel": self.kernel_s, "init": self.init_s,
                **{p: t.span_s for p, t in self.passes.items()}, "between": self.between_s, "after": self.after_s}


def profile(text: str, total_s: float) -> BootProfile:
    """The profile of one boot's console (as the target kept it) that took total_s on the host."""
    found = BootProfile(total_s, len(text.encode()))
    unframed = console.unframe(text, console.likeliest_token(text))
    report = ktap.parse_runner(unframed.payloads, unframed.lines)
    runs = [r for r in report.runs if r.printk_start is not None and r.printk_end is not None]
    stamps = [float(m["seconds"]) for m in STAMP.finditer(text)]
    if not runs or not stamps or report.init_uptime_ms is None:
        return found
    guest_end = max(stamps[-1], runs[-1].printk_end or 0.0)
    found.host_s = total_s - guest_end
    found.kernel_s = report.init_uptime_ms / 1000
    found.init_s = (runs[0].printk_start or 0.0) - found.kernel_s
    last_end = None
    for run in runs:
        start, end = run.printk_start or 0.0, run.printk_end or 0.0
        wall, cpu = (run.duration_us or 0) / 1e6, None if run.cpu_us is None else run.cpu_us / 1e6
        span = found.passes.get(run.privilege)
        if span is None:
            found.between_s += start - last_end if last_end is not None else 0.0
            found.passes[run.privilege] = PassTime(end - start, wall, cpu)
        else:
            span.span_s, span.runs_s, span.cpu_s = span.span_s + end - (last_end or start), span.runs_s + wall, \
                plus(span.cpu_s, cpu)
        last_end = end
        key = f"{run.privilege}/{run.case or run.program}"
        before = found.cases.get(key, CaseTime(0.0, 0.0))
        found.cases[key] = CaseTime(before.wall_s + wall, plus(before.cpu_s, cpu))
    found.after_s = guest_end - (last_end or 0.0)
    return found
