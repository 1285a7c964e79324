#include "exec_child.h"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <exception>

#include "errors.h"
#include "process.h"

namespace sigwake {

void ExecChild::raise_setup_failure() const {
  if (!WIFEXITED(status)) return;
  if (WEXITSTATUS(status) == kExecRefused) throw Unsupported(why);
  if (WEXITSTATUS(status) == kExecSetupFailed) throw ReproError("the child or its new image could not go on: " + why);
}

ExecChild run_exec_child(const std::function<void()>& body, const std::function<void(pid_t)>& meanwhile) {
  Pipe why;  // close-on-exec: a child that execs says nothing
  const pid_t child = fork();
  check(child >= 0, "fork");
  if (child == 0) {
    why.close_read_end();
    int code = kExecSetupFailed;
    std::string words;
    try {
      body();
      words = errno_text("execv(/proc/self/exe)");
    } catch (const Unsupported& e) {
      code = kExecRefused;
      words = e.what();
    } catch (const std::exception& e) {
      words = e.what();
    }
    why.send(words);
    _exit(code);
  }
  why.close_write_end();
  ExecChild end;
  if (meanwhile) {
    try {
      meanwhile(child);
    } catch (...) {
      kill(child, SIGKILL), waitpid(child, nullptr, 0);
      throw;
    }
  }
  check(waitpid(child, &end.status, 0) == child, "waitpid");
  end.why = why.read_to_end();
  return end;
}

void exec_image(const char* image, const std::vector<std::string>& args) {
  std::vector<std::string> words = {"sigwake-image", "--image", image};
  words.insert(words.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (std::string& word : words) argv.push_back(word.data());
  argv.push_back(nullptr);
  check(close(STDOUT_FILENO) == 0, "close(stdout)");
  execv("/proc/self/exe", argv.data());
}

}  // namespace sigwake
