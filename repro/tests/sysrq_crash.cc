// A stand-in reproducer that crashes the kernel: SysRq 'c' (sysrq_handle_crash)
// panics it, ending the boot while this case runs. Without the right to write
// /proc/sysrq-trigger (an unprivileged pass) it says unsupported.
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

int main(int argc, char** argv) {
  if (argc == 2 && std::strcmp(argv[1], "--list") == 0) {
    std::puts("sysrq_crash sysrq-trigger");  // granted: the runner seals it from every other run
    return 0;
  }
  std::printf("KTAP version 1\n1..1\n");
  std::fflush(stdout);
  const int fd = open("/proc/sysrq-trigger", O_WRONLY | O_CLOEXEC);
  if (fd < 0 || write(fd, "c", 1) != 1) {
    std::printf("# verdict=unsupported\n# reason=/proc/sysrq-trigger: %s\nok 1 sysrq_crash # SKIP\n",
                std::strerror(errno));
    return 4;
  }
  std::printf("# verdict=delivered\nok 1 sysrq_crash\n");  // never reached: the kernel is gone
  return 0;
}
