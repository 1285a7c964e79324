#include "kernel_path.h"
#include "libbpf_log.h"

#include <bpf/libbpf.h>

#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>

#include "../bpf/kernel_path.h"
#include "bpf/kernel_path.skel.h"

namespace sigwake {
namespace {

struct Function {
  const char* name;
  int index;  // into calls[]
  const char* program;  // its kprobe in kernel_path.bpf.c
};

// In chain order. The pending-wakeup handler is perf_pending_irq from v6.1 on
// and perf_pending_event before: whichever attaches is reported.
const Function kFunctions[] = {
    {"perf_output_wakeup", KP_PERF_OUTPUT_WAKEUP, "output_wakeup"},
    {"perf_pending_irq", KP_PERF_PENDING, "pending_irq"},
    {"perf_pending_event", KP_PERF_PENDING, "pending_event"},
    {"perf_event_wakeup", KP_PERF_EVENT_WAKEUP, "event_wakeup"},
    {"kill_fasync", KP_KILL_FASYNC, "kill_fasync"},
    {"send_sigio", KP_SEND_SIGIO, "send_sigio"},
};
constexpr std::size_t kPendingIrq = 1, kPendingEvent = 2;

std::string unavailable(int err, const std::string& doing) {
  return std::string("unavailable: ") + strerrorname_np(err) + " " + doing;
}

// Why a kprobe on `symbol` did not attach, as precisely as the system says.
std::string why_not_attached(const std::string& symbol, int err) {
  if (access("/sys/bus/event_source/devices/kprobe", F_OK) != 0) {
    return "unavailable: the kernel has no kprobe PMU (CONFIG_KPROBES / CONFIG_KPROBE_EVENTS)";
  }
  std::ifstream kallsyms("/proc/kallsyms");
  for (std::string address, type, name; kallsyms >> address >> type >> name;) {
    kallsyms.ignore(1 << 12, '\n');
    if (name == symbol) return unavailable(err, "attaching the kprobe");
  }
  return "unavailable: no symbol " + symbol + " in /proc/kallsyms (inlined, or not in this kernel)";
}


}  // namespace

struct KernelPathTracer::State {
  kernel_path_bpf* skeleton = nullptr;
  std::string load_error;  // set when the tracer could not be loaded at all
  std::string attach_error[std::size(kFunctions)];
  std::vector<bpf_link*> links;
};

KernelPathTracer::KernelPathTracer() : state_(std::make_unique<State>()) {
  keep_libbpf_log();
  state_->skeleton = kernel_path_bpf__open();
  if (state_->skeleton == nullptr) {
    state_->load_error = unavailable(errno, "opening the tracer");
    return;
  }
  if (const int err = kernel_path_bpf__load(state_->skeleton); err != 0) {
    state_->load_error = unavailable(-err, "loading the tracer (no BPF, no kernel BTF, or not root); libbpf: " +
                                                libbpf_log_tail(300));
    return;
  }
  for (std::size_t i = 0; i < std::size(kFunctions); ++i) {
    bpf_program* program = bpf_object__find_program_by_name(state_->skeleton->obj, kFunctions[i].program);
    bpf_link* link = program != nullptr ? bpf_program__attach(program) : nullptr;
    if (link == nullptr) {
      state_->attach_error[i] = why_not_attached(kFunctions[i].name, errno);
    } else {
      state_->links.push_back(link);
    }
  }
  if (bpf_link* done = bpf_program__attach(state_->skeleton->progs.event_wakeup_done)) state_->links.push_back(done);
}

KernelPathTracer::~KernelPathTracer() {
  for (bpf_link* link : state_->links) bpf_link__destroy(link);
  if (state_->skeleton != nullptr) kernel_path_bpf__destroy(state_->skeleton);
}

void KernelPathTracer::follow(pid_t tgid) {
  if (!state_->load_error.empty()) return;
  state_->skeleton->bss->target_tgid = static_cast<__u32>(tgid);
  std::memset(state_->skeleton->bss->calls, 0, sizeof state_->skeleton->bss->calls);
}

std::vector<std::pair<std::string, std::string>> KernelPathTracer::counts() const {
  // The pending-wakeup handler has two names: report the one that attached,
  // else why perf_pending_irq did not.
  const bool older_name = state_->load_error.empty() && !state_->attach_error[kPendingIrq].empty() &&
                          state_->attach_error[kPendingEvent].empty();
  const std::size_t unreported = older_name ? kPendingIrq : kPendingEvent;
  std::vector<std::pair<std::string, std::string>> out;
  for (std::size_t i = 0; i < std::size(kFunctions); ++i) {
    if (i == unreported) continue;
    const Function& f = kFunctions[i];
    if (!state_->load_error.empty()) {
      out.emplace_back(f.name, state_->load_error);
    } else if (!state_->attach_error[i].empty()) {
      out.emplace_back(f.name, state_->attach_error[i]);
    } else {
      out.emplace_back(f.name, std::to_string(state_->skeleton->bss->calls[f.index]));
    }
  }
  return out;
}

}  // namespace sigwake
