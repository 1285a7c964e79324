// How a reproducer stops early. Reproducers read linearly: a failed syscall throws,
// and repro/lib/main.cc turns the exception into a KTAP verdict.
#pragma once

#include <stdexcept>
#include <string>

namespace sigwake {

// The kernel refused the setup (verdict `unsupported`); the reason names the errno.
struct Unsupported : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// The kernel reads back a signal's owner or number other than the one set: the
// signal would go astray (verdict `misdelivered`).
struct Misdelivered : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// The reproducer itself failed (verdict `error`, never a kernel verdict).
struct ReproError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// The errno's name ("ENODEV"), or "errno:N" for a number glibc has no name for: one word either way.
std::string errno_name(int err);

// "what: strerror(errno)" for the current errno.
std::string errno_text(const std::string& what);

// Throws ReproError(errno_text(what)) when `ok` is false.
void check(bool ok, const std::string& what);

}  // namespace sigwake
