"""Times as the records keep them: ISO 8601 in UTC, to the millisecond. A time the kernel's log gives
(seconds since the kernel started) is placed by its boot's start: that start plus those seconds, early by
the firmware's time before the kernel's clock runs."""

from __future__ import annotations

import datetime


def iso(epoch: float | None) -> str | None:
    if epoch is None:
        return None
    return datetime.datetime.fromtimestamp(epoch, datetime.timezone.utc).isoformat(timespec="milliseconds")


def on_kernel_clock(boot_started: str, seconds: float) -> str:
    """When the kernel's log says something happened: its boot's start (ISO) plus the log's seconds."""
    return (datetime.datetime.fromisoformat(boot_started) + datetime.timedelta(seconds=seconds)).isoformat(
        timespec="milliseconds")
