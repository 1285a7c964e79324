// A reproducer that never finishes: the guest must kill it at its deadline.
#include <unistd.h>

int main() {
  for (;;) pause();
}
