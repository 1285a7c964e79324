"""Kernel config fragments (kernel-configs/*.config): merged with the tree's own
scripts/kconfig/merge_config.sh onto a base config (tinyconfig, or a full
.config such as a distro's), then olddefconfig; afterwards every requested option is checked, since Kconfig
silently drops what the tree does not have or what a dependency forbids."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

OPTION = re.compile(r"^(CONFIG_[A-Za-z0-9_]+)=(.*)$")
UNSET = re.compile(r"^# (CONFIG_[A-Za-z0-9_]+) is not set$")
ESSENTIAL = "# sigwake: essential"

# Merged in this order. btf.config (slower builds, needs pahole) and
# debug.config are there to add with --fragment.
DEFAULT_FRAGMENTS = ("qemu-boot", "perf", "pvh", "bpf", "tracepoints")
# Another architecture's: its own board's console and power-off, no PVH (an x86 entry point).
ARCH_FRAGMENTS = {"amd64": DEFAULT_FRAGMENTS, "arm64": ("qemu-boot-arm64", "perf", "bpf", "tracepoints")}
# Merged first onto a full .config (--config): a distro's names certificate files only its own tree has.
OWN_KEYS = Path(__file__).resolve().parents[3] / "kernel-configs" / "own-keys.config"


@dataclass(frozen=True)
class Fragment:
    path: Path
    essential: bool  # a missing option is an error, not a warning
    options: dict[str, str]  # CONFIG_X -> y, m, a value, or n for "is not set"


def read_options(text: str) -> dict[str, str]:
    options: dict[str, str] = {}
    for line in text.splitlines():
        if (m := OPTION.match(line)) is not None:
            options[m[1]] = m[2]
        elif (m := UNSET.match(line)) is not None:
            options[m[1]] = "n"
    return options


def read_fragment(path: Path) -> Fragment:
    text = path.read_text()
    return Fragment(path, ESSENTIAL in text.splitlines()[:3], read_options(text))


def default_fragments(config_dir: Path, arch: str = "amd64") -> list[Path]:
    return [config_dir / f"{name}.config" for name in ARCH_FRAGMENTS[arch]]


@dataclass
class ConfigCheck:
    errors: list[str] = field(default_factory=list)  # essential options the tree dropped
    warnings: list[str] = field(default_factory=list)  # optional ones


def check(fragments: list[Fragment], config: dict[str, str]) -> ConfigCheck:
    result = ConfigCheck()
    for fragment in fragments:
        for name, wanted in fragment.options.items():
            got = config.get(name, "n")
            if got != wanted:
                message = f"{name}={wanted} requested by {fragment.path.name}, the tree gave {got}"
                (result.errors if fragment.essential else result.warnings).append(message)
    return result
