// A reproducer whose verdict alternates between runs (delivered, then
// not-delivered, ...): its runs always split, so adaptive repeats must run it
// every time asked. It counts its runs in a file named after its parent (the
// case loop), the same for every run of one loop.
#include <unistd.h>

#include <cstdio>
#include <string>

int main(int argc, char**) {
  if (argc > 1) return 2;  // no --list: the loop runs it whole
  const std::string path = "/tmp/sigwake-test-alternate-" + std::to_string(getppid());
  int runs = 0;
  if (FILE* in = std::fopen(path.c_str(), "r")) {
    if (std::fscanf(in, "%d", &runs) != 1) runs = 0;
    std::fclose(in);
  }
  FILE* out = std::fopen(path.c_str(), "w");
  if (out == nullptr) return 2;
  std::fprintf(out, "%d\n", runs + 1);
  std::fclose(out);
  const bool even = runs % 2 == 0;
  std::printf("KTAP version 1\n1..1\n# verdict=%s\n%s 1 alternate\n", even ? "delivered" : "not-delivered",
              even ? "ok" : "not ok");
  return even ? 0 : 1;
}
