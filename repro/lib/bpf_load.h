// Loading a reproducer's own BPF program: a kernel that refuses BPF here (by
// policy or for a missing feature, shown by a probe) makes the case
// `unsupported`; any other failure is ours (`error`), with libbpf's words.
#pragma once

#include <bpf/bpf.h>

#include <functional>
#include <string>

#include "errors.h"
#include "libbpf_log.h"
#include "report.h"

namespace sigwake {

// Why loading a `type` program failed with `err`, when a probe shows the kernel
// refuses it (no bpf(), unprivileged BPF off, no global data, no such program
// type); "" when no probe does.
std::string bpf_refusal(int err, bpf_prog_type type);

// Throws for a skeleton load that failed with `err`: Unsupported when
// bpf_refusal() or the caller's own probe (`refusal`) names why, else
// ReproError. libbpf's log tail goes into the report first.
[[noreturn]] void throw_load_failure(Report& report, int err, bpf_prog_type type, std::string refusal = "");

// A case's libbpf skeleton (bpftool's T with its open, load and destroy):
// opened, adjusted (e.g. its .rodata set), loaded, destroyed with the case. A
// failed load throws through throw_load_failure(); `probe` may name a refusal
// only this program can show.
template <typename T, T* (*Open)(), int (*Load)(T*), void (*Destroy)(T*)>
class Skeleton {
 public:
  Skeleton(Report& report, bpf_prog_type type, const std::function<void(T&)>& adjust = {},
           const std::function<std::string()>& probe = {}) {
    keep_libbpf_log();
    skeleton_ = Open();
    if (skeleton_ == nullptr) throw ReproError(errno_text("opening the BPF object"));
    if (adjust) adjust(*skeleton_);
    if (const int err = Load(skeleton_); err != 0) {
      Destroy(skeleton_);
      throw_load_failure(report, -err, type, probe ? probe() : "");
    }
  }
  Skeleton(const Skeleton&) = delete;
  Skeleton& operator=(const Skeleton&) = delete;
  ~Skeleton() { Destroy(skeleton_); }

  T* operator->() const { return skeleton_; }

 private:
  T* skeleton_;
};

}  // namespace sigwake
