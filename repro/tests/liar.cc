// A reproducer whose exit status contradicts the verdict it states (ok, exit 1).
#include <cstdio>

int main() {
  std::printf("KTAP version 1\n1..1\n# verdict=delivered\nok 1 liar\n");
  return 1;
}
