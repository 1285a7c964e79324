"""Any target's raw capture (a QEMU boot's console, the host runner's output, a lab job's log) turned into the
kernel's outcome: the framed KTAP read off it, how the boot ended, the kernel's reports and the case each
hit. A boot that panics, hangs or prints no complete report becomes a recorded verdict."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field

from ..core.model import CUT_OFF, LOST_IN_TRANSPORT, NEVER_RAN, BootRecord, KernelResult, Origin, PeerResult, \
    ReproResult, Runner, Splat
from ..core.clock import iso, on_kernel_clock
from ..core.outcomes import now
from ..core.verdicts import Verdict
from ..parse import console, ktap, splats
from ..parse.attribution import attribute
from ..parse.outcome import judged, outlived, run_problem
from ..parse.repeats import CaseRun, combine
from .capture import Capture


@dataclass(frozen=True)
class KernelOutcome:
    release: str | None
    boot: BootRecord
    reproducers: list[ReproResult]
    paranoid: dict[str, str]  # privilege pass -> the perf_event_paranoid it ran under
    skipped: dict[str, str] = field(default_factory=dict)  # privilege pass -> why the target did not run it
    job_id: str = ""  # the lab's job that ran it (LAVA), else empty
    job_url: str = ""
    splats: list[Splat] = field(default_factory=list)  # kernel reports on the console, each with its case
    version: str = ""  # uname -v
    peers: list[PeerResult] = field(default_factory=list)  # the upstream selftests' tests, when they ran
    machine: dict[str, str] = field(default_factory=dict)  # what the selftests need of the machine, as probed

    def as_result(self, kernel_id: str, runner: Runner, origin: Origin = Origin("file"), commit: str = "") -> KernelResult:
        """The outcome as a kernel's result, to be judged as a run's is (a bisection step, a validated kernel)."""
        return KernelResult(kernel_id, self.release, origin, runner, self.boot, self.reproducers, now(), commit,
                            self.paranoid, self.splats, self.version, self.peers, self.machine)


def boot_status(outcome: Capture, report: ktap.RunnerReport, timeout_s: float) -> tuple[str, str]:
    """("ok" | "timeout" | "boot-failed", what happened)."""
    panic = console.panic_line(outcome.console)
    if outcome.target_failed and not report.done:
        return "boot-failed", outcome.target_failed + (f"; {panic}" if panic else "")
    if outcome.timed_out and outcome.silent_s:
        return "timeout", f"the console was silent for {outcome.silent_s:.0f} s" + (f"; {panic}" if panic else "")
    if outcome.timed_out:
        return "timeout", (outcome.ended or f"no power-off within {timeout_s:.0f} s") + (f"; {panic}" if panic else "")
    if panic and not report.done:
        return "boot-failed", panic + (f"; {outcome.ended}" if outcome.ended else "")
    if not report.done and outcome.ended:
        return "boot-failed", outcome.ended
    if not report.done:
        why = outcome.stderr.strip().splitlines()[-1] if outcome.stderr.strip() else "no error from QEMU"
        return "boot-failed", f"QEMU exited with {outcome.exit_code} before the init reported: {why}"
    return "ok", ""


@dataclass(frozen=True)
class BootRead:
    """One boot's console, read: what the init reported, how the boot ended, and the kernel's reports."""

    outcome: Capture
    report: ktap.RunnerReport
    status: str  # ok, timeout or boot-failed
    detail: str
    rejected: int
    splats: list[Splat]
    line_offset: int = 0  # where its console starts in the kernel's console log
    lost: tuple[tuple[int, int], ...] = ()  # each framed line lost on the way: (its number, the next intact one's line)

    @property
    def target_failed(self) -> str:
        """Why the target, not the kernel, ended this boot before the init was done ("" when it did not)."""
        return self.outcome.target_failed if self.status != "ok" else ""

    @property
    def cut_off(self) -> Verdict:
        """What a run this boot's end cut short is: a timeout when it hung, else a failed boot."""
        return Verdict.TIMEOUT if self.status == "timeout" else Verdict.BOOT_FAILED

    def resumable(self) -> bool:
        """It ended (a crash, a hang) after the init had started running programs, before it was done."""
        return self.status != "ok" and self.report.init_uptime_ms is not None and bool(self.report.runs) and \
            not self.report.done

    def resume_key(self) -> str:
        """The run in progress when it ended, as the init's sigwake.resume names it."""
        return self.report.last_started()


def read_boot(outcome: Capture, token: str, timeout_s: float, line_offset: int = 0, lossy: bool = False) -> BootRead:
    """`line_offset`: where this boot's console starts in the kernel's console log (a resumed boot's). `lossy`:
    the console came through a transport that can lose a framed line whole (a lab's log), so a boot that ended
    well and lost one is read as having lost it on the way; on a console of our own, a frame is lost only to
    the guest's own output (a printk storm), which is no excuse."""
    unframed = console.unframe(outcome.console, token)
    report = ktap.parse_runner(unframed.payloads, unframed.lines)
    if (unpacked := console.unpack_failure(outcome.console)) and not outcome.target_failed and not report.done:
        # sigwake's own image did not reach the guest whole (seen: 147 MB in a 512 MB arm64 guest): its init then
        # never had its token, and nothing of the kernel was judged
        outcome = dataclasses.replace(outcome, target_failed=f"the guest could not unpack sigwake's initramfs "
                                                           f"({unpacked}): too large for the guest's memory?")
    status, detail = boot_status(outcome, report, timeout_s)
    if unframed.missing:
        detail = "; ".join(filter(None, [detail, f"framed lines lost or torn: {unframed.missing}"]))
    reports = splats.find(outcome.console, frozenset(report.continued))
    found = [dataclasses.replace(s, console_line=s.console_line + line_offset)
             for s in attribute(reports, report.runs, report.peers)]
    lost = tuple(zip(unframed.missing, unframed.missing_before)) if lossy and status == "ok" else ()
    return BootRead(outcome, report, status, detail, unframed.rejected, found, line_offset, lost)


def spans(boot: BootRead) -> list[tuple[int, int]]:
    """Each program run's, then each upstream selftest's, start and result lines (0 where it has none)."""
    return [(run.console_line, run.console_end) for run in boot.report.runs] + \
        [(peer.console_line, peer.result.line if peer.result else 0) for peer in boot.report.peers]


def lost_near(boot: BootRead, around: list[tuple[int, int]], i: int) -> str:
    """Which framed lines were lost between the end of the program before the i-th (by `around`, the boot's
    spans()) and the start of the one after it, in words ("" when none): what the i-th said may lack one of
    them, or hold another run's or a pass's line. (A lost frame is placed by the next intact one's line.)"""
    low = (around[i - 1][1] or around[i - 1][0]) if i > 0 else 0
    high = around[i + 1][0] if i + 1 < len(around) else None
    lost = [seq for seq, before in boot.lost if low < before and (high is None or before <= high)]
    return f"{LOST_IN_TRANSPORT} (frames {', '.join(map(str, lost))})" if lost else ""


def run_started(boot: BootRead, run: ktap.ProgramRun | ktap.PeerRun) -> str | None:
    """When a run started: a native run's own clock (the harness's), else its boot's start plus the kernel log's
    clock as it started (early by the firmware's time before that clock runs); None where neither was given."""
    if run.clock_start is not None:
        return iso(run.clock_start)
    started = iso(boot.outcome.started)
    return None if started is None or run.printk_start is None else on_kernel_clock(started, run.printk_start)


def case_runs(boot: BootRead) -> list[CaseRun]:
    """Every run the boot's init reported, the one a crash or hang cut off included."""
    console_end = boot.outcome.console.count("\n") + 1  # where a run cut off ends: with its console
    runs: list[CaseRun] = []
    around = spans(boot)
    for i, run in enumerate(boot.report.runs):
        took = run.duration_us / 1000 if run.duration_us is not None else None
        problem = run_problem(run)
        last = run.console_end or console_end
        span = (run.console_line + boot.line_offset, last + boot.line_offset) if run.console_line else None
        at = run_started(boot, run)
        if lost := lost_near(boot, around, i):  # the target's loss, no word of the kernel
            why = f"{lost}: it said {run.ended()}"
            names = dict.fromkeys(case for case, *_ in judged(run.document, run.program, run.ended(), run.exit_code,
                                                              False)) if run.case is None else [run.case]
            runs += [CaseRun(name, run.privilege, Verdict.ERROR, why, {}, took, console_span=span,
                             left_out=run.left_out, torn=True, started_at=at) for name in names]
        elif problem is not None and run.result is None and boot.status != "ok":
            runs.append(CaseRun(run.case or run.program, run.privilege, boot.cut_off,
                                f"{CUT_OFF}: {boot.detail}", {}, console_span=span, reported=False, started_at=at))
        elif problem is not None:
            runs.append(CaseRun(run.case or run.program, run.privilege, problem[0], problem[1], {}, took,
                                console_span=span, started_at=at))
        else:
            cases = outlived(judged(run.document, run.case or run.program, run.ended(), run.exit_code,
                                    run.case is not None), run.strays)
            runs += [CaseRun(case, run.privilege, verdict, reason, evidence, took, run.kernel_path, span,
                             left_out=run.left_out, started_at=at)
                     for case, verdict, reason, evidence in cases]
    return runs


# kselftest's lines around a test that say only where it is; what else it printed for the test is the detail.
KSELFTEST_PROGRESS = ("RUN ", "OK ", "FAIL ", "SKIP ", "XFAIL ", "Starting ")


def peer_results(peer: ktap.PeerRun, offset: int, started: str | None) -> list[PeerResult]:
    """Each test an upstream selftest program reported; the program itself as an `error` when it ended badly
    or reported none (a timeout, a crash, a boot that ended while it ran). Each carries the program's start:
    kselftest's lines give a test no clock of its own."""
    found = []
    for test in peer.document.tests if peer.document is not None else []:
        if test.result is None:
            continue
        r = test.result
        word = ("fail" if not r.ok else "pass") if r.directive is None else \
            {"SKIP": "skip", "XFAIL": "xfail"}.get(r.directive, "error")
        said = [d.text.strip() for d in test.diagnostics if not d.text.strip().startswith(KSELFTEST_PROGRESS)]
        found.append(PeerResult(peer.program, r.name, word, "; ".join(filter(None, [*said[-3:], r.why])),
                                r.line + offset if r.line else 0, started))
    ended = peer.result.why if peer.result is not None and peer.result.why else (
        f"exit {peer.exit_code}" if peer.exit_code is not None else "the boot ended while it ran")
    if peer.result is None or peer.exit_code is None or not found:
        found.append(PeerResult(peer.program, peer.program, "error", f"{ended}; {len(found)} test result(s) before",
                                peer.console_line + offset if peer.console_line else 0, started))
    return found


def boot_peer_results(boot: BootRead) -> list[PeerResult]:
    """Each upstream selftest's results in a boot; one near a framed line lost on the way is an error that says
    so (a lost "not ok" must not read as a selftest that agreed)."""
    found, around = [], spans(boot)
    for j, peer in enumerate(boot.report.peers):
        if lost := lost_near(boot, around, len(boot.report.runs) + j):
            found.append(PeerResult(peer.program, peer.program, "error", lost,
                                    peer.console_line + boot.line_offset if peer.console_line else 0,
                                    run_started(boot, peer)))
        else:
            found += peer_results(peer, boot.line_offset, run_started(boot, peer))
    return found


def combine_boots(boots: list[BootRead], programs: list[str], privileges: tuple[str, ...],
                  repeat: int | None = None, cases: dict[str, tuple[str, ...]] | None = None) -> KernelOutcome:
    """One kernel's outcome from its boots: the first, and the fresh ones that carried on after a crash; with
    `repeat`, each case must have been reported that many times. A program that never ran is lost case by
    case, each of its `cases` (the program's name alone when none are known) with why; so is each of its
    `cases` that a program which ran did not report."""
    runs = [run for boot in boots for run in case_runs(boot)]
    last = boots[-1]
    ran = {(run.privilege, run.program) for boot in boots for run in boot.report.runs}
    skipped = {k: v for boot in boots for k, v in boot.report.skipped.items()}
    reported = {(run.privilege, run.case) for run in runs}
    for privilege in (p for p in privileges if p not in skipped):
        for program in programs:
            known = (cases or {}).get(program) or ()
            # A program that ran answers for each case it is known to hold: one it left out is lost too.
            missing = [n for n in known if (privilege, n) not in reported] if (privilege, program) in ran \
                else list(known or (program,))
            verdict, why = (last.cut_off, f"{NEVER_RAN}: the boot ended: {last.detail}") if last.status != "ok" \
                else (Verdict.ERROR, "the guest did not report this " + ("case" if (privilege, program) in ran else
                                                                          "reproducer"))
            runs += [CaseRun(name, privilege, verdict, why, {}, reported=False) for name in missing]

    pass_seconds: dict[str, float] = {}
    for run in (run for boot in boots for run in boot.report.runs):
        pass_seconds[run.privilege] = pass_seconds.get(run.privilege, 0.0) + (run.duration_us or 0) / 1e6
    first_bad = next((b for b in boots if b.status != "ok"), boots[0])
    detail = first_bad.detail
    if len(boots) > 1:
        later = "; ".join(f"boot {n}: {b.status}" + (f" ({b.detail})" if b.detail else "")
                          for n, b in enumerate(boots[1:], start=2))
        detail += f"; the runs after it went on in {len(boots) - 1} fresh boot(s): {later}"
    boot = BootRecord(first_bad.status, round(sum(b.outcome.seconds for b in boots), 3),
                      boots[0].report.init_uptime_ms, detail, sum(b.rejected for b in boots),
                      console.tail(first_bad.outcome.console) if first_bad.status != "ok" else None,
                      {k: round(v, 3) for k, v in pass_seconds.items()},
                      [w for b in boots for w in b.report.warnings], len(boots),
                      any(console.kernel_banner(b.outcome.console) for b in boots) or
                      boots[0].report.init_uptime_ms is not None, target_failed(boots), iso(boots[0].outcome.started))
    release = next((b.report.release for b in boots if b.report.release), None)
    paranoid = {k: v for b in boots for k, v in b.report.paranoid.items()}
    return KernelOutcome(release, boot, combine(runs, repeat), paranoid, skipped,
                        splats=[s for b in boots for s in b.splats],
                        version=next((b.report.version for b in boots if b.report.version), ""),
                        peers=[p for b in boots for p in boot_peer_results(b)],
                        machine={k: v for b in boots for k, v in b.report.machine.items()})


def target_failed(boots: list[BootRead]) -> str:
    """Why the target ended the kernel's boots, when it ended every one that ended badly; "" when the kernel
    ended any (its crash or hang stands, whatever the target did to another boot)."""
    bad = [b for b in boots if b.status != "ok"]
    return bad[0].target_failed if bad and all(b.target_failed for b in bad) else ""


def interpret(outcome: Capture, token: str, programs: list[str], privileges: tuple[str, ...],
              timeout_s: float, repeat: int | None = None, cases: dict[str, tuple[str, ...]] | None = None,
              lossy: bool = False) -> KernelOutcome:
    """One boot (or one run on a host, one lab job) turned into the kernel's outcome."""
    return combine_boots([read_boot(outcome, token, timeout_s, lossy=lossy)], programs, privileges, repeat, cases)
