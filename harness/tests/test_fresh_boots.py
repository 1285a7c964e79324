"""When run_qemu stops booting afresh after a crash, and that it says why (the boots are faked: each
reports how it ended; the rule under test is run_qemu's own)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest

from sigwake.kernels.kernels import Kernel
from sigwake.core.model import Origin
from sigwake.targets import qemu, qemu_run
from sigwake.targets.options import RunOptions


@dataclass(frozen=True)
class FakeBoot:
    key: str  # the run it ended in ("" : it ended well)
    seconds: float
    detail: str = "crashed"
    status: str = "boot-failed"

    @property
    def outcome(self) -> FakeBoot:
        return self

    def resumable(self) -> bool:
        return bool(self.key)

    def resume_key(self) -> str:
        return self.key


def boots_of(script: list[FakeBoot], monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
             fresh_boots: bool = True) -> list[FakeBoot]:
    given = list(script)
    monkeypatch.setattr(qemu_run, "boot_once", lambda *args, **kwargs: given.pop(0))
    monkeypatch.setattr(qemu_run, "combine_boots", lambda boots, *args: boots)
    kernel = Kernel("k", Origin("file"), tmp_path / "vmlinuz")
    return qemu_run.run_qemu(kernel, tmp_path / "initrd", ["p"],
                             RunOptions(qemu.Accel("tcg", "test"), fresh_boots=fresh_boots),
                             tmp_path / "console.log")  # type: ignore[return-value]


def test_fresh_boots_go_on_while_each_gets_further(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    boots = boots_of([FakeBoot("root/p/a", 10), FakeBoot("root/p/b", 10), FakeBoot("", 10, "", "ok")], monkeypatch,
                     tmp_path)
    assert [b.key for b in boots] == ["root/p/a", "root/p/b", ""]


def test_without_fresh_boots_a_crash_ends_the_run(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    boots = boots_of([FakeBoot("root/p/a", 10), FakeBoot("", 10, "", "ok")], monkeypatch, tmp_path, fresh_boots=False)
    assert [b.key for b in boots] == ["root/p/a"]


def test_a_boot_that_gets_no_further_ends_them_and_says_so(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    boots = boots_of([FakeBoot("root/p/a", 10), FakeBoot("root/p/b", 10), FakeBoot("root/p/b", 10)], monkeypatch,
                     tmp_path)
    assert len(boots) == 3
    assert boots[-1].detail == "crashed; no fresh boot after this one: it ended in the run the last one ended in (root/p/b)"


def test_time_ends_them_and_says_so(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    cap = RunOptions(qemu.Accel("tcg", "test")).timeout_for(1)
    boots = boots_of([FakeBoot("root/p/a", cap * 0.6), FakeBoot("root/p/b", cap * 0.6), FakeBoot("", 1)], monkeypatch,
                     tmp_path)
    assert len(boots) == 2 and boots[-1].detail.startswith("crashed; no fresh boot after this one: the boots took ")


def test_an_interrupted_fresh_boot_leaves_its_console_in_the_log_and_no_file(monkeypatch: pytest.MonkeyPatch,
                                                                            tmp_path: Path) -> None:
    given = [FakeBoot("root/p/a", 10)]

    def boot(kernel: object, initrd: object, config: object, log: Path, *args: object) -> FakeBoot:
        if given:
            return given.pop(0)
        log.write_text("the fresh boot's console\n")
        raise qemu.Stopped("stopped while booting")
    monkeypatch.setattr(qemu_run, "boot_once", boot)
    with pytest.raises(qemu.Stopped):
        qemu_run.run_qemu(Kernel("k", Origin("file"), tmp_path / "vmlinuz"), tmp_path / "initrd", ["p"],
                          RunOptions(qemu.Accel("tcg", "test")), tmp_path / "console.log")
    assert (tmp_path / "console.log").read_text().endswith("the fresh boot's console\n")
    assert not (tmp_path / "console.log.resumed").exists()
