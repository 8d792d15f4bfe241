// The rendezvous of multi-process communicators: a minimal key-value store over TCP, served by
// rank 0 at MASTER_ADDR:MASTER_PORT (the role of NCCL's bootstrap and PyTorch's TCPStore), where
// every rank publishes what the others need to connect and waits for theirs. The collectives'
// data never goes through it.
//
// Bounded and timed out: keys of at most 256 bytes, values of at most 64 KiB, 64 MiB in all, 1024
// connections; every client call has a deadline, and a server that gets a malformed request
// closes that connection only.
//
// The protocol, on one connection per client: a request is an op byte, the key's length (4 bytes,
// little-endian) and the key; 'S' (set) adds the value's length and the value and is answered
// with one byte, 1; 'G' (get) is answered once the key has a value, with its length and the value.
#ifndef INFINICCL_TCP_STORE_H_
#define INFINICCL_TCP_STORE_H_

#include <chrono>
#include <memory>
#include <string>
#include <thread>

namespace infiniccl {

constexpr size_t kStoreMaxKeyBytes = 256;
constexpr size_t kStoreMaxValueBytes = size_t{64} << 10;
constexpr size_t kStoreMaxTotalBytes = size_t{64} << 20;
constexpr int kStoreMaxConnections = 1024;

using Deadline = std::chrono::steady_clock::time_point;

// The store, served by a thread of its own until destroyed.
class TcpStoreServer {
 public:
  // Listens on host:port (port 0: any free port; port() says which). Null, with *why, on failure.
  static std::unique_ptr<TcpStoreServer> Start(const std::string& host, int port, std::string* why);
  ~TcpStoreServer();
  TcpStoreServer(const TcpStoreServer&) = delete;
  TcpStoreServer& operator=(const TcpStoreServer&) = delete;

  int port() const { return port_; }

 private:
  TcpStoreServer(int listener, int wake_read, int wake_write, int port);
  void Serve();

  const int listener_;
  const int wake_read_;  // written to stop the thread
  const int wake_write_;
  const int port_;
  std::thread thread_;
};

// One client's connection to the store.
class TcpStoreClient {
 public:
  // Connects to host:port, retrying until the deadline (the server may not listen yet). Null,
  // with *why, on failure.
  static std::unique_ptr<TcpStoreClient> Connect(const std::string& host, int port,
                                                 Deadline deadline, std::string* why);
  ~TcpStoreClient();
  TcpStoreClient(const TcpStoreClient&) = delete;
  TcpStoreClient& operator=(const TcpStoreClient&) = delete;

  // This host's address on the connection to the store (numeric), which the other hosts of the
  // job can reach too.
  std::string LocalAddress() const;

  bool Set(const std::string& key, const std::string& value, Deadline deadline, std::string* why);
  // Waits until the key has a value, or the deadline.
  bool Get(const std::string& key, std::string* value, Deadline deadline, std::string* why);

 private:
  explicit TcpStoreClient(int socket) : socket_(socket) {}
  // After a failed call (a timeout among them) an answer may still be on its way: the connection
  // cannot tell it from the next one's, so every later call fails.
  bool Usable(std::string* why) const;

  const int socket_;
  bool broken_ = false;
};

}  // namespace infiniccl

#endif  // INFINICCL_TCP_STORE_H_
