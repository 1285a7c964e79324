"""After a boot that crashed or hung once the init was running programs, fresh boots that carry on after the
run that ended it, for every target that boots (QEMU here, a LAVA lab): each makes progress, so they go on
while the boots so far took less than one boot's cap, and whatever stops them is said in the last boot's
detail. Their consoles are appended to the kernel's one console log, each after a line that says so."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from pathlib import Path

from .interpret import BootRead

# One boot: (its console log, the run to resume after ("" for the first), where its console starts in the
# kernel's log) -> the boot read.
BootOnce = Callable[[Path, str, int], BootRead]


def with_fresh_boots(boot_once: BootOnce, console_log: Path, cap_s: float, fresh: bool = True) -> list[BootRead]:
    """The first boot, and (with `fresh`, RunOptions.fresh_boots) the fresh ones after it."""
    boots = [boot_once(console_log, "", 0)]
    while fresh and boots[-1].resumable():
        spent = sum(b.outcome.seconds for b in boots)
        key = boots[-1].resume_key()
        stop = ""
        if spent >= cap_s:
            stop = f"the boots took {spent:.0f} s of {cap_s:.0f} s"
        elif len(boots) > 1 and key == boots[-2].resume_key():  # no progress: the init did not get past it
            stop = f"it ended in the run the last one ended in ({key})"
        if stop:
            boots[-1] = dataclasses.replace(boots[-1], detail=f"{boots[-1].detail}; no fresh boot after this one: {stop}")
            break
        resumed_log = console_log.with_name(console_log.name + ".resumed")
        with console_log.open("a") as log:
            log.write(f"\n=== sigwake: boot {len(boots) + 1}, a fresh boot after {key} ended boot {len(boots)} "
                      f"({boots[-1].status}) ===\n")
        offset = len(console_log.read_text(errors="replace").split("\n")) - 1
        try:
            boots.append(boot_once(resumed_log, key, offset))
        finally:  # an interrupted fresh boot (Ctrl-C) still leaves its console in the one log, and no file
            with console_log.open("a") as log:
                log.write(resumed_log.read_text(errors="replace") if resumed_log.exists() else "")
            resumed_log.unlink(missing_ok=True)
    return boots
