#!/usr/bin/python3
"""Writes the golden kernel reports (harness/tests/data/kernel-reports/): Debian's linux-source-<series> built
for amd64 or arm64 (cross-compiled) with lkdtm, sigwake's lock provokers
(harness/tests/kernel-patches/0001-lkdtm-sigwake-lock-provokers.patch: it applies to 6.1, 6.12 and 7.2) and
every detector (kernel-configs/reports.config), booted once per crash type under QEMU with an init that asks
lkdtm for it (repro/tests/lkdtm_init.cc). Each console is kept from the init's "provoking" line to its end, or
to its first kernel line END_S of the guest's clock after the provocation, as the kernel printed it. The titles
the reader must give them are in expected.json, written by hand from syzkaller's rules
(docs/kernel-reports.md), never from what the reader says. Exits 1 if the guest never provoked a type.

    bench/golden_reports.py [--series 6.1 6.12] [--arch amd64 arm64] [--type TYPE ...] [--out DIR] [--wait S]
    bench/golden_reports.py --kfence [--series ...] [--arch ...]
    bench/golden_reports.py --hardlockup [--series ...] [--arch ...]

With --kfence the build is lkdtm with KFENCE and no other detector (kernel-configs/kfence.config, as Debian
ships KFENCE: without KASAN), and the types are KFENCE's. With --hardlockup the build is lkdtm with the buddy
hard-lockup detector (kernel-configs/hardlockup.config: no PMU needed) and no KASAN, booted with 2 CPUs, and the
types are those that need either: a CPU looping with interrupts off (HARDLOCKUP, and SMP_CALL_LOCKUP's
cross-CPU call that never returns) and EXHAUST_STACK, whose overflow meets VMAP_STACK's guard page, which a
build with KASAN drops. A kernel without the buddy detector (before 6.6) leaves HARDLOCKUP out alone.
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "harness"))

from sigwake.commands.cli import REPO, default_cache  # noqa: E402
from sigwake.core.progress import Progress  # noqa: E402
from sigwake.kernels import kconfig, patches, source_tree  # noqa: E402
from sigwake.kernels.build import KERNEL_ARCHES, BuildRequest, BuiltKernel, KernelBuilder  # noqa: E402
from sigwake.kernels.kernels import KernelCache  # noqa: E402
from sigwake.programs import binaries, initramfs  # noqa: E402
from sigwake.targets import qemu  # noqa: E402
from sigwake.targets.registry import slowdown_for  # noqa: E402

OUT = REPO / "harness/tests/data/kernel-reports"
DEBUG_FRAGMENTS = (REPO / "kernel-configs/lkdtm.config", REPO / "kernel-configs/reports.config")
KFENCE_FRAGMENTS = (REPO / "kernel-configs/lkdtm.config", REPO / "kernel-configs/kfence.config")
KFENCE_TYPES = ("KFENCE_READ_AFTER_FREE",)
HARDLOCKUP_FRAGMENTS = (REPO / "kernel-configs/lkdtm.config", REPO / "kernel-configs/hardlockup.config")
HARDLOCKUP_TYPES = ("HARDLOCKUP", "SMP_CALL_LOCKUP", "EXHAUST_STACK")
NEEDS_BUDDY = {"HARDLOCKUP"}  # the rest report without it: the caller's soft lockup, the guard page
BUDDY = "CONFIG_HARDLOCKUP_DETECTOR_BUDDY="
# The crash types provoked: every one of lkdtm's that needs nothing this host or these builds lack, and
# sigwake's lockdep provokers. A type a kernel's lkdtm lacks is said and left out. Left out of lkdtm's:
# HARDLOCKUP (no PMU, so no NMI watchdog: --hardlockup boots 2 CPUs with the buddy detector), SMP_CALL_LOCKUP
# (one CPU: --hardlockup), CORRUPT_PAC (arm64 pointer authentication), CFI_FORWARD_PROTO and CFI_BACKWARD (a clang CFI
# build), STACKLEAK_ERASING (a GCC plugin), KFENCE_READ_AFTER_FREE (--kfence: no KFENCE beside reports.config's
# KASAN), DOUBLE_FAULT (x86_32), PPC_SLB_MULTIHIT and WRITE_OPD (powerpc, ia64); those that report nothing (ATOMIC_TIMING, REFCOUNT_TIMING, REPORT_STACK,
# REPORT_STACK_CANARY, SLAB_INIT_ON_ALLOC, BUDDY_INIT_ON_ALLOC, UNALIGNED_LOAD_STORE_WRITE); LOOP (SOFTLOCKUP's
# report again, after END_S of waiting); EXHAUST_STACK (--hardlockup): without VMAP_STACK's guard page (KASAN
# drops it unless KASAN_VMALLOC) the overflow runs into hundreds of NULL dereferences, a spiral and not a report.
TYPES = (
    "PANIC", "PANIC_STOP_IRQOFF", "BUG", "WARNING", "WARNING_MESSAGE", "EXCEPTION", "ACCESS_NULL",
    "ACCESS_USERSPACE", "WRITE_RO", "WRITE_RO_AFTER_INIT", "WRITE_KERN", "EXEC_DATA", "EXEC_STACK", "EXEC_KMALLOC",
    "EXEC_VMALLOC", "EXEC_RODATA", "EXEC_USERSPACE", "EXEC_NULL", "SOFTLOCKUP", "HUNG_TASK", "SPINLOCKUP",
    "CORRUPT_STACK", "CORRUPT_STACK_STRONG", "STACK_GUARD_PAGE_LEADING", "STACK_GUARD_PAGE_TRAILING",
    "CORRUPT_LIST_ADD", "CORRUPT_LIST_DEL", "OVERFLOW_SIGNED", "OVERFLOW_UNSIGNED", "ARRAY_BOUNDS", "FAM_BOUNDS",
    "REFCOUNT_INC_OVERFLOW", "REFCOUNT_ADD_OVERFLOW", "REFCOUNT_INC_NOT_ZERO_OVERFLOW",
    "REFCOUNT_ADD_NOT_ZERO_OVERFLOW", "REFCOUNT_DEC_ZERO", "REFCOUNT_DEC_NEGATIVE", "REFCOUNT_DEC_AND_TEST_NEGATIVE",
    "REFCOUNT_SUB_AND_TEST_NEGATIVE", "REFCOUNT_SUB_AND_TEST_ZERO", "REFCOUNT_INC_ZERO", "REFCOUNT_ADD_ZERO",
    "REFCOUNT_INC_SATURATED", "REFCOUNT_DEC_SATURATED", "REFCOUNT_ADD_SATURATED", "REFCOUNT_INC_NOT_ZERO_SATURATED",
    "REFCOUNT_ADD_NOT_ZERO_SATURATED", "REFCOUNT_DEC_AND_TEST_SATURATED", "REFCOUNT_SUB_AND_TEST_SATURATED",
    "READ_AFTER_FREE", "WRITE_AFTER_FREE", "READ_BUDDY_AFTER_FREE", "WRITE_BUDDY_AFTER_FREE", "SLAB_FREE_DOUBLE",
    "SLAB_FREE_CROSS", "SLAB_FREE_PAGE", "SLAB_LINEAR_OVERFLOW", "VMALLOC_LINEAR_OVERFLOW",
    "USERCOPY_SLAB_SIZE_TO", "USERCOPY_SLAB_SIZE_FROM", "USERCOPY_SLAB_WHITELIST_TO", "USERCOPY_SLAB_WHITELIST_FROM",
    "USERCOPY_STACK_FRAME_TO", "USERCOPY_STACK_FRAME_FROM", "USERCOPY_STACK_BEYOND", "USERCOPY_VMALLOC",
    "USERCOPY_FOLIO", "USERCOPY_KERNEL", "FORTIFY_STR_OBJECT", "FORTIFY_STR_MEMBER", "FORTIFY_MEM_OBJECT",
    "FORTIFY_MEM_MEMBER", "FORTIFY_STRSCPY", "UNSET_SMEP",
    "LOCKDEP_BAD_UNLOCK", "LOCKDEP_CIRCULAR", "LOCKDEP_SLEEP_IN_ATOMIC", "SCHEDULE_ATOMIC",
    "LOCKDEP_HELD_RETURN_USER", "LOCKDEP_HELD_FREED", "LOCKDEP_INCONSISTENT", "LOCKDEP_IRQ_ORDER",
    "LOCKDEP_IRQ_INVERSION",
)
X86_ONLY = {"UNSET_SMEP"}  # lkdtm says XFAIL and does nothing elsewhere
# Where a type's aftermath is a spiral, not a report: 7.2's exit after SCHEDULE_ATOMIC dereferences NULL some
# 450 times (each a report of its own) until the host's deadline.
SPIRALS = {("7.2", "SCHEDULE_ATOMIC")}
PROVOKERS = REPO / "harness/tests/kernel-patches/0001-lkdtm-sigwake-lock-provokers.patch"
MARK = "sigwake-golden: provoking "
# A console is cut at its end before its first kernel line this much of the guest's clock after the provocation:
# a soft lockup repeats until the host's deadline, which an emulated arm64 guest reaches after four times as many
# reports. BOOT_S is what the boot before it may take on a loaded host (seen: 190 s, three jobs on 2 cores).
END_S = 150.0
BOOT_S = 240.0
STAMP = re.compile(r"^\[\s*(\d+\.\d+)\]", re.M)


def init_image(arch: str, cache_root: Path, work: Path, progress: Progress) -> Path:
    build_dir = binaries.build_dir_for(arch, REPO / "build")
    if not (build_dir / "build.ninja").exists():  # a cross build dir is set up (cross file, sysroot) once
        binaries.build_for(arch, REPO, REPO / "build", cache_root, progress)
    # ninja by the output's path: it regenerates a build dir set up before the target was declared
    subprocess.run(["ninja", "-C", str(build_dir), "repro/sigwake-lkdtm-init"], check=True,
                   stdout=subprocess.DEVNULL, timeout=600)
    init = build_dir / "repro/sigwake-lkdtm-init"
    entries = [initramfs.directory(d) for d in ("dev", "proc", "sys")]
    entries += [initramfs.char_device("dev/console", 5, 1), initramfs.executable("init", init.read_bytes())]
    return initramfs.write(entries, work / f"lkdtm-{arch}.cpio")


def bootable(builder: KernelBuilder, built: BuiltKernel, tree: Path, arch: str, log: Path,
             progress: Progress) -> Path:
    if arch != "amd64":
        return built.image
    # amd64's PVH vmlinux with KASAN resets before its first console line under QEMU 7.2's TCG (KASAN's early
    # shadow setup); the same objects as a bzImage boot.
    with patches.applied(tree, [PROVOKERS]):
        return builder.make(tree, ["bzImage"], log, progress) / KERNEL_ARCHES[arch].image


def boot(image: Path, initrd: Path, append: tuple[str, ...], arch: str, log: Path, wait_s: int, cpus: int) -> str:
    # Nothing past END_S after the provocation is kept, and the guest's clock is the host's (an emulated arm64
    # guest is slower, not later): a console that has not ended by then (a soft lockup) need not run longer.
    request = qemu.BootRequest(image, initrd, append, qemu.choose_accel(None, arch=arch),
                               timeout_s=BOOT_S + END_S + 30 + 4 * wait_s, memory_mb=1024,
                               silence_s=slowdown_for(arch) * (30 + 2 * wait_s), arch=arch, cpus=cpus)
    return qemu.boot(request, log).console


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--series", nargs="+", default=["6.1", "6.12"])
    parser.add_argument("--arch", nargs="+", default=["amd64", "arm64"], choices=sorted(KERNEL_ARCHES))
    parser.add_argument("--type", nargs="+", default=list(TYPES), dest="types")
    parser.add_argument("--out", type=Path, default=OUT)
    parser.add_argument("--wait", type=int, default=8, help="seconds the guest gives the kernel's later reports")
    detector = parser.add_mutually_exclusive_group()
    detector.add_argument("--kfence", action="store_true", help="KFENCE's types, on a build with KFENCE alone")
    detector.add_argument("--hardlockup", action="store_true",
                          help="a hard lockup, a cross-CPU call that never returns and a stack overflow, on a "
                          "build with the buddy detector and no KASAN, booted with 2 CPUs")
    args = parser.parse_args()
    if args.types == list(TYPES):
        args.types = list(KFENCE_TYPES if args.kfence else HARDLOCKUP_TYPES if args.hardlockup else TYPES)
    args.cpus = 2 if args.hardlockup else 1  # the buddy detector: the CPU beside the locked one reports it
    args.detector = "kfence" if args.kfence else "hardlockup" if args.hardlockup else ""
    progress = Progress()
    cache = KernelCache(default_cache())
    work = cache.root / "golden-reports"
    builder = KernelBuilder(cache.root)
    unprovoked = 0  # types the guest never reached: their consoles are kept whole, and the run fails
    for series in args.series:
        root = work / f"linux-{series}"
        tree = next(iter(root.iterdir())) if root.is_dir() else source_tree.unpack(cache, series, root, progress)
        for arch in args.arch:
            fragments = (*kconfig.default_fragments(REPO / "kernel-configs", arch),
                         *(KFENCE_FRAGMENTS if args.kfence else HARDLOCKUP_FRAGMENTS if args.hardlockup
                           else DEBUG_FRAGMENTS))
            built = builder.build(BuildRequest(tree, fragments, (PROVOKERS,), arch=arch), progress)
            if built.warnings:
                print(f"{series} {arch}: the tree dropped {built.warnings}")
            types = args.types
            if args.hardlockup and any(w.startswith(BUDDY) for w in built.warnings):
                print(f"{series} {arch}: no buddy hard-lockup detector in this build: {sorted(NEEDS_BUDDY)} left out")
                types = [t for t in types if t not in NEEDS_BUDDY]
            image = bootable(builder, built, tree, arch, work / f"image-{arch}.log", progress)
            unprovoked += provoke(series, arch, image, init_image(arch, cache.root, work, progress), types, args, work)
    return 1 if unprovoked else 0


def provoke(series: str, arch: str, image: Path, initrd: Path, types: list[str], args: argparse.Namespace,
            work: Path) -> int:
    """Boots once per crash type; returns how many the guest never provoked."""
    never = 0
    dest = args.out / f"{series}-{arch}"
    dest.mkdir(parents=True, exist_ok=True)
    logs = work / f"{series}-{arch}{'-' + args.detector if args.detector else ''}"  # two runs at once boot apart
    known = boot(image, initrd, (), arch, logs.parent / f"{logs.name}.types.log", args.wait, args.cpus)
    # Read to the console's end: on 2 CPUs the kernel's own lines (its "reboot: Power down") can land inside
    # the init's long line, which the serial port is still draining.
    listed = known[found:] if (found := known.find("sigwake-golden: types")) >= 0 else ""
    for crash in types:
        if crash not in listed.split() or (arch != "amd64" and crash in X86_ONLY):
            print(f"{series} {arch}: lkdtm has no {crash} here: left out")
            continue
        if (series, crash) in SPIRALS:
            print(f"{series} {arch}: {crash} spirals: left out")
            continue
        # nmi_watchdog=panic: a hard lockup panics (the locked CPU holds the init, which can never power off)
        append = (f"sigwake.lkdtm={crash}", f"sigwake.wait={args.wait}", "rcupdate.rcu_cpu_stall_timeout=3",
                  *(("nmi_watchdog=panic",) if args.hardlockup else ()))
        console = boot(image, initrd, append, arch, logs.parent / f"{logs.name}.boot.log", args.wait, args.cpus)
        at = console.find(MARK + crash)
        if at < 0:
            print(f"{series} {arch}: {crash}: the guest never provoked it; console kept whole")
            never += 1
        provoked = max((float(m[1]) for m in STAMP.finditer(console, 0, max(at, 0))), default=0.0)
        console = console[max(at, 0):]
        late = next((m.start() for m in STAMP.finditer(console) if float(m[1]) > provoked + END_S), len(console))
        (dest / f"{crash}.log").write_text(console[:late])
        print(f"{series} {arch}: {crash}: {console[:late].count(chr(10))} lines")
    return never


if __name__ == "__main__":
    sys.exit(main())
