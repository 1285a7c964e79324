// A reproducer that never finishes: the guest must kill it at its deadline. Its listing answers at once,
// as every program's does (no cases: it runs whole), so a boot spends the deadline on the run alone.
#include <cstring>
#include <unistd.h>

int main(int argc, char** argv) {
  if (argc == 2 && std::strcmp(argv[1], "--list") == 0) return 0;
  for (;;) pause();
}
