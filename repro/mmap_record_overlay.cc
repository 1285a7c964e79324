// PERF_RECORD_MMAP2 of a file mapped through overlayfs. Since overlayfs maps
// a backing file (the underlying layer's file, kept in vma->vm_file, its user
// path beside it), perf_event_mmap_event() in kernel/events/core.c must name
// the mapping as the program sees it, as /proc/PID/maps does (file_user_path(),
// file_user_inode()): perf tools match the two. We map a file of a read-only
// overlay of two tmpfs directories, in a mount namespace of our own, with a
// DUMMY event tracking data mappings as MMAP2, and compare its record with the
// mapping's line in /proc/self/maps.
//  - mmap_record_overlay_path: the record's file name (8818f507a939 "perf/core:
//    Fix MMAP event path names with backing files"; before, the layer's path).
//  - mmap_record_overlay_device: its device and inode (fa4f4bae893f "perf/core:
//    Fix MMAP2 event device with backing files"; before, the layer's).
// A kernel older than backing files maps the layer's file itself: record and
// maps name it alike. Root only (mounting), and only where overlayfs is built
// in (Debian builds it as a module, which our initramfs does not load).
#include <fcntl.h>
#include <sched.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cinttypes>
#include <cstdio>
#include <fstream>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "lib/grants.h"
#include "lib/records.h"
#include "lib/repro.h"

namespace sigwake {
namespace {

// A mapping's line in /proc/self/maps: its device, inode and path.
struct MapsLine {
  unsigned maj = 0, min = 0;
  std::uint64_t ino = 0;
  std::string path;
};

std::optional<MapsLine> maps_line_of(std::uintptr_t address) {
  std::ifstream maps("/proc/self/maps");
  for (std::string line; std::getline(maps, line);) {
    std::uintptr_t start = 0, end = 0;
    MapsLine found;
    int path_at = 0;
    if (std::sscanf(line.c_str(), "%" SCNxPTR "-%" SCNxPTR " %*s %*x %x:%x %" SCNu64 " %n", &start, &end, &found.maj,
                    &found.min, &found.ino, &path_at) != 5 || start != address) {
      continue;
    }
    found.path = line.substr(static_cast<std::size_t>(path_at));
    return found;
  }
  return std::nullopt;
}

// The DUMMY event's record of our mapping, and the mapping's line in /proc/self/maps.
struct Mapped {
  std::optional<Mmap2Record> record;
  MapsLine maps;
};

// A read-only overlay of two tmpfs directories, in a mount namespace of ours (ends with the program) on a
// tmpfs over `/tmp` (a host) or `/repro` (our guest, which has no /tmp); returns the path of a file of one
// page in it.
std::string overlay_file() {
  if (unshare(CLONE_NEWNS) != 0) throw Unsupported(errno_text("unshare(CLONE_NEWNS): mounting needs CAP_SYS_ADMIN"));
  check(mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) == 0, "mount(/, MS_PRIVATE)");
  const std::string top = access("/tmp", F_OK) == 0 ? "/tmp" : "/repro";
  check(mount("tmpfs", top.c_str(), "tmpfs", 0, "size=1m") == 0, "mount(tmpfs)");
  for (const char* dir : {"/lower", "/under", "/merged"}) check(mkdir((top + dir).c_str(), 0755) == 0, "mkdir");
  const int out = open((top + "/lower/file").c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
  check(out >= 0, "open(lower/file)");
  const std::string page(static_cast<std::size_t>(sysconf(_SC_PAGESIZE)), 'x');
  check(write(out, page.data(), page.size()) == static_cast<ssize_t>(page.size()), "write(lower/file)");
  close(out);
  const std::string layers = "lowerdir=" + top + "/lower:" + top + "/under";  // two lowers: no upper needed
  if (mount("overlay", (top + "/merged").c_str(), "overlay", MS_RDONLY, layers.c_str()) != 0) {
    if (errno == ENODEV) throw Unsupported("mount(overlay): ENODEV: no overlayfs built into this kernel (a module is never loaded here)");
    check(false, "mount(overlay, " + layers + ")");
  }
  return top + "/merged/file";
}

Mapped map_through_overlay() {
  const int fd = open(overlay_file().c_str(), O_RDONLY | O_CLOEXEC);
  check(fd >= 0, "open(merged/file)");
  perf_event_attr attr = blank_attr(PERF_TYPE_SOFTWARE, PERF_COUNT_SW_DUMMY);
  attr.mmap_data = 1;  // a data mapping, not executable
  attr.mmap2 = 1;
  attr.disabled = 1;
  attr.exclude_kernel = 1;
  attr.exclude_hv = 1;
  const PerfEvent event = PerfEvent::open(attr, 0, -1);
  RingBuffer ring = RingBuffer::map(event.fd(), 0);
  const auto page = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
  event.enable();
  void* mapped = mmap(nullptr, page, PROT_READ, MAP_PRIVATE, fd, 0);
  event.disable();
  check(mapped != MAP_FAILED, "mmap(merged/file)");
  close(fd);
  const auto address = reinterpret_cast<std::uintptr_t>(mapped);
  const std::optional<MapsLine> maps = maps_line_of(address);
  check(munmap(mapped, page) == 0, "munmap");
  if (!maps) throw ReproError("no line in /proc/self/maps for our mapping");
  Mapped out{std::nullopt, *maps};
  const RecordRead read = ring.consume();
  for (const Record& r : read.records) {
    const auto mmap2 = parse_mmap2(r);
    if (mmap2 && mmap2->mapping.addr == address) out.record = mmap2;
  }
  return out;
}

Words overlay_kconfig() { return {"CONFIG_PERF_EVENTS", "CONFIG_TMPFS", "CONFIG_OVERLAY_FS"}; }

// Where a mapping through overlayfs cannot be made.
std::vector<Expectation> cannot_mount() {
  return {always(Verdict::kUnsupported, "mounting needs CAP_SYS_ADMIN (the case makes the overlay)").in_passes(kUserPasses),
          always(Verdict::kUnsupported, "Debian builds overlayfs as a module (CONFIG_OVERLAY_FS=m), and sigwake's "
                                        "initramfs loads none")
              .of_origins({"debian"})};
}

Facts overlay_facts(Expectation fix, std::string_view defining) {
  std::vector<Expectation> expected = cannot_mount();
  expected.push_back(std::move(fix));
  return {.expected = std::move(expected), .defining = {defining}, .shown = {defining}, .kconfig = overlay_kconfig(),
          .grants = {kGrantSysAdmin}};  // it mounts two tmpfs and the overlay, in a mount namespace of its own
}

}  // namespace

SIGWAKE_CASE(mmap_record_overlay_path,
             {overlay_facts(fixed_by("8818f507a939", Verdict::kMisdelivered, Verdict::kMeasured,
                                     "8818f507a939 \"perf/core: Fix MMAP event path names with backing files\" (Debian's "
                                     "changelog of linux 6.12.57-1): perf_event_mmap_event() in kernel/events/core.c "
                                     "names a mapping by file_user_path(), as /proc/PID/maps does")
                                .backported({"6.12.57"}),
                            "name_as_maps")}) {
  const Mapped m = map_through_overlay();
  if (!m.record) return report.decide(Verdict::kNoRecord, "no MMAP2 record of our mapping");
  report.add("record_name", m.record->mapping.filename);
  report.add("maps_name", m.maps.path);
  report.add("name_as_maps", m.record->mapping.filename == m.maps.path);
  if (m.record->mapping.filename != m.maps.path) {
    return report.decide(Verdict::kMisdelivered, "the MMAP2 record names another path than /proc/self/maps");
  }
  report.decide(Verdict::kMeasured, "the MMAP2 record names the mapping as /proc/self/maps does");
}

SIGWAKE_CASE(mmap_record_overlay_device,
             {overlay_facts(fixed_by("fa4f4bae893f", Verdict::kMisdelivered, Verdict::kMeasured,
                                     "fa4f4bae893f \"perf/core: Fix MMAP2 event device with backing files\" (Debian's "
                                     "changelog of linux 6.12.57-1): perf_event_mmap_event() in kernel/events/core.c "
                                     "takes the device and inode from file_user_inode(), as /proc/PID/maps does")
                                .backported({"6.12.57"}),
                            "device_as_maps")}) {
  const Mapped m = map_through_overlay();
  if (!m.record) return report.decide(Verdict::kNoRecord, "no MMAP2 record of our mapping");
  const bool same = m.record->maj == m.maps.maj && m.record->min == m.maps.min && m.record->ino == m.maps.ino;
  report.add("record_device", std::to_string(m.record->maj) + ":" + std::to_string(m.record->min) + " " +
                                  std::to_string(m.record->ino));
  report.add("maps_device", std::to_string(m.maps.maj) + ":" + std::to_string(m.maps.min) + " " +
                                std::to_string(m.maps.ino));
  report.add("device_as_maps", same);
  if (!same) {
    return report.decide(Verdict::kMisdelivered, "the MMAP2 record names another device or inode than /proc/self/maps");
  }
  report.decide(Verdict::kMeasured, "the MMAP2 record's device and inode are those /proc/self/maps shows");
}

}  // namespace sigwake
