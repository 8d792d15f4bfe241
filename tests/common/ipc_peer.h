// The other process of the interprocess tests: tests/common/ipc_peer.cc, a program on InfiniRT's
// public API that a test starts (its path is INFINIRT_IPC_PEER, set by CMake) and talks to by
// lines on its standard input and output. It uses whatever backend the test's environment
// selects. Two roles:
//
//   ipc_peer export BYTES VALUE
//     Allocates BYTES of device memory holding VALUE and an interprocess event recorded after
//     that, and prints "handles <memory hex> <event hex>". Then waits for a line on its input,
//     prints "final <first byte of the memory now>", frees everything and exits 0.
//
//   ipc_peer import MEMORY_HEX EVENT_HEX BYTES EXPECTED
//     Opens both handles, makes a stream wait for the event and prints "waiting"; then copies
//     the memory out on that stream, checks that every byte is EXPECTED, sets the memory to
//     EXPECTED + 1, closes the handle, destroys the event, prints "done" and exits 0.
//
//   ipc_peer pool-import FD DATA_HEX BYTES EXPECTED
//     Imports the memory pool another process shared as descriptor FD (inherited) and the
//     allocation whose export data is DATA_HEX, checks that every byte is EXPECTED, sets them to
//     EXPECTED + 1, frees the allocation and the pool, prints "done" and exits 0.
//
// Either prints "unsupported <call>" and exits 3 where the backend answers NotSupported, and
// "failed <what>" and exits 1 on any other failure.
#ifndef INFINIRT_TESTS_COMMON_IPC_PEER_H_
#define INFINIRT_TESTS_COMMON_IPC_PEER_H_

#include <fcntl.h>
#include <poll.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

namespace infinirt::testing {

constexpr int kPeerUnsupported = 3;

// A handle's bytes as hexadecimal text, and back (false when the text is not such).
template <class Handle>
std::string HexOf(const Handle& handle) {
  static const char kDigits[] = "0123456789abcdef";
  const auto* bytes = reinterpret_cast<const unsigned char*>(&handle);
  std::string text;
  for (size_t i = 0; i < sizeof handle; ++i) {
    text += kDigits[bytes[i] >> 4];
    text += kDigits[bytes[i] & 15];
  }
  return text;
}
template <class Handle>
bool FromHex(const std::string& text, Handle* handle) {
  if (text.size() != 2 * sizeof *handle) return false;
  auto* bytes = reinterpret_cast<unsigned char*>(handle);
  for (size_t i = 0; i < sizeof *handle; ++i) {
    unsigned int byte = 0;
    if (std::sscanf(text.c_str() + 2 * i, "%2x", &byte) != 1) return false;
    bytes[i] = static_cast<unsigned char>(byte);
  }
  return true;
}

#ifdef INFINIRT_IPC_PEER  // in the test programs (infinirt_use_ipc_peer), not in the peer

// A running peer: its pid and the two ends of its lines.
class Peer {
 public:
  // Starts the peer with these arguments; running() tells whether it started.
  explicit Peer(const std::vector<std::string>& arguments) {
    int to_child[2], from_child[2];
    if (pipe2(to_child, O_CLOEXEC) != 0) return;
    if (pipe2(from_child, O_CLOEXEC) != 0) {
      close(to_child[0]);
      close(to_child[1]);
      return;
    }
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, to_child[0], 0);
    posix_spawn_file_actions_adddup2(&actions, from_child[1], 1);
    std::vector<std::string> all = {INFINIRT_IPC_PEER};
    all.insert(all.end(), arguments.begin(), arguments.end());
    std::vector<char*> argv;
    for (std::string& argument : all) argv.push_back(argument.data());
    argv.push_back(nullptr);
    if (posix_spawn(&pid_, INFINIRT_IPC_PEER, &actions, nullptr, argv.data(), environ) != 0) {
      pid_ = -1;
    }
    posix_spawn_file_actions_destroy(&actions);
    close(to_child[0]);
    close(from_child[1]);
    input_ = fdopen(to_child[1], "w");
    output_ = fdopen(from_child[0], "r");
  }
  ~Peer() {
    if (input_ != nullptr) std::fclose(input_);
    if (output_ != nullptr) std::fclose(output_);
    Wait();
  }
  Peer(const Peer&) = delete;
  Peer& operator=(const Peer&) = delete;

  bool running() const { return pid_ > 0 && input_ != nullptr && output_ != nullptr; }

  // The next line it printed, without its newline; "" at its end, or when it printed nothing
  // for `timeout_ms`.
  std::string ReadLine(int timeout_ms = 60000) {
    char line[512];
    if (output_ == nullptr) return "";
    pollfd readable{fileno(output_), POLLIN, 0};
    if (poll(&readable, 1, timeout_ms) != 1) return "";
    if (std::fgets(line, sizeof line, output_) == nullptr) return "";
    std::string text(line);
    if (!text.empty() && text.back() == '\n') text.pop_back();
    return text;
  }
  void WriteLine(const std::string& line) {
    if (input_ == nullptr) return;
    std::fputs((line + "\n").c_str(), input_);
    std::fflush(input_);
  }
  // Its exit status once it has ended (-1 when it did not exit normally).
  int Wait() {
    if (pid_ > 0) {
      int status = 0;
      if (waitpid(pid_, &status, 0) == pid_) {
        exit_code_ = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
      }
      pid_ = -1;
    }
    return exit_code_;
  }

 private:
  pid_t pid_ = -1;
  int exit_code_ = -1;
  std::FILE* input_ = nullptr;
  std::FILE* output_ = nullptr;
};

#endif  // INFINIRT_IPC_PEER

}  // namespace infinirt::testing

#endif  // INFINIRT_TESTS_COMMON_IPC_PEER_H_
