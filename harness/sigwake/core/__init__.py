"""The ground every layer stands on: the protocol and its verdicts, the typed model of a run and of the
commands' records, their JSON Schemas and codec, atomic writes, progress, exit codes, Debian's names."""
