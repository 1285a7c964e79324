#include "bpf_load.h"

#include <bpf/libbpf.h>
#include <unistd.h>

#include <cerrno>
#include <fstream>

#include "errors.h"
#include "libbpf_log.h"

namespace sigwake {

std::string bpf_refusal(int err, bpf_prog_type type) {
  if (err == ENOSYS) return "the kernel has no bpf() syscall (CONFIG_BPF_SYSCALL)";
  if (err == EPERM || err == EACCES) {
    int disabled = -1;
    std::ifstream("/proc/sys/kernel/unprivileged_bpf_disabled") >> disabled;
    if (disabled != 0 && geteuid() != 0) {
      return "probe: kernel.unprivileged_bpf_disabled=" + std::to_string(disabled) + " and we are not root";
    }
  }
  if (libbpf_probe_bpf_prog_type(BPF_PROG_TYPE_SOCKET_FILTER, nullptr) == 0) {
    return "probe: the kernel has no socket-filter programs (CONFIG_NET), with which libbpf probes global data";
  }
  if (libbpf_probe_bpf_prog_type(type, nullptr) == 0) {
    return "probe: libbpf_probe_bpf_prog_type(" + std::string(libbpf_bpf_prog_type_str(type)) +
           ") says the kernel lacks these programs";
  }
  return "";
}

void throw_load_failure(Report& report, int err, bpf_prog_type type, std::string refusal) {
  report.add("libbpf_log", libbpf_log_tail(2000));
  errno = err;
  const std::string what = errno_text("loading the BPF program");
  if (const std::string probed = bpf_refusal(err, type); !probed.empty()) refusal = probed;
  if (!refusal.empty()) throw Unsupported(what + " (" + refusal + ")");
  throw ReproError(what + " (no probe shows the kernel lacking a feature; libbpf_log has libbpf's words)");
}

}  // namespace sigwake
