// A reproducer that tries to forge the guest's console frames: it looks for the
// boot token where a process could find it (the command line, the token file,
// PID 1's memory) and for a way onto the console (its stdin, /dev/console,
// /dev/ttyS0), and writes a frame with a far-ahead sequence number wherever it
// can. It reports what it found; the guest's real frames must survive it.
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>
#if defined(__x86_64__)
#include <sys/io.h>
#endif

#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>

namespace {

std::string token_in(const char* path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  const std::string all = text.str();
  const std::string key = "sigwake.token=";
  const auto at = all.find(key);
  if (at != std::string::npos) return all.substr(at + key.size(), all.find_first_of(" \n", at) - at - key.size());
  return std::string(path) == "/sigwake/token" ? all.substr(0, all.find('\n')) : "";
}

bool is_console(int fd) {
  struct stat st {};
  return fstat(fd, &st) == 0 && S_ISCHR(st.st_mode) && (major(st.st_rdev) == 5 || major(st.st_rdev) == 4);
}

// Whether `port` takes an access (a child tries; without a grant it is killed): only evdev_sigio is granted
// the keyboard controller's ports before exec, and no program the serial console's.
bool port_open(bool write, unsigned short port) {
#if defined(__x86_64__)
  const pid_t child = fork();
  if (child == 0) {
    if (write) {
      outb(0, port);
    } else {
      (void)inb(port);
    }
    _exit(0);
  }
  int status = 0;
  return child > 0 && waitpid(child, &status, 0) == child && WIFEXITED(status) && WEXITSTATUS(status) == 0;
#else
  return false;
#endif
}

}  // namespace

int main(int argc, char** argv) {
  if (argc == 2 && std::string(argv[1]) == "--list") {
    std::printf("forge\n");
    return 0;
  }
  std::string token = token_in("/proc/cmdline");
  const bool cmdline_token = !token.empty();
  const std::string file_token = token_in("/sigwake/token");
  if (token.empty()) token = file_token;
  // PID 1's memory holds the token: root could read it through /proc/1/mem if PID 1 were dumpable or the
  // reproducer kept CAP_SYS_PTRACE.
  const int init_memory = open("/proc/1/mem", O_RDONLY | O_CLOEXEC);
  const bool stdin_console = is_console(STDIN_FILENO);
  const int console = open("/dev/console", O_WRONLY | O_NOCTTY);
  const int serial = open("/dev/ttyS0", O_WRONLY | O_NOCTTY);
  // A frame with another token, or none known, is still written: it must be rejected, not disrupt.
  const std::string forged = "SIGWAKE " + (token.empty() ? std::string("0000000000000000") : token) +
                             " 999999 00000000 ok 1 forged\n";
  int written = 0;
  for (int fd : {stdin_console ? STDIN_FILENO : -1, console, serial}) {
    if (fd >= 0) written += write(fd, forged.data(), forged.size()) == static_cast<ssize_t>(forged.size());
  }
  // A kernel report's first line in its own output: inside its frame, it must never be read as the kernel's.
  std::printf("KTAP version 1\n1..1\n# [    1.000000] WARNING: CPU: 0 PID: 1 at forged_report+0x1/0x2\n"
              "# cmdline_token=%d\n# token_file_readable=%d\n# init_memory_readable=%d\n"
              "# stdin_is_console=%d\n# console_openable=%d\n# serial_openable=%d\n# forged_frames_written=%d\n"
              "# serial_ports_writable=%d\n# keyboard_status_readable=%d\n# verdict=measured\nok 1 forge\n",
              cmdline_token, !file_token.empty(), init_memory >= 0, stdin_console, console >= 0, serial >= 0, written,
              port_open(true, 0x3ff), port_open(false, 0x64));  // the UART's scratch register; i8042 status
  return 0;
}
