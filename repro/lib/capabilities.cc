#include "capabilities.h"

#include <linux/capability.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "errors.h"

namespace sigwake {
namespace {

struct Sets {
  __user_cap_header_struct header{_LINUX_CAPABILITY_VERSION_3, 0};
  __user_cap_data_struct data[_LINUX_CAPABILITY_U32S_3]{};
};

Sets current() {
  Sets sets;
  check(syscall(SYS_capget, &sets.header, sets.data) == 0, "capget");
  return sets;
}

}  // namespace

bool has_effective(int cap) {
  const Sets sets = current();
  return (sets.data[cap / 32].effective & (1u << (cap % 32))) != 0;
}

void drop_effective(int cap) {
  Sets sets = current();
  sets.data[cap / 32].effective &= ~(1u << (cap % 32));
  check(syscall(SYS_capset, &sets.header, sets.data) == 0, "capset");
}

}  // namespace sigwake
