// A reproducer that dies by a signal before printing a verdict.
#include <signal.h>
#include <unistd.h>

int main() {
  write(STDOUT_FILENO, "KTAP version 1\n", 15);
  raise(SIGSEGV);
  return 0;
}
