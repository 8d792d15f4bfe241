#include "tcp_store.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdint>
#include <cstring>
#include <iterator>
#include <map>
#include <vector>

namespace infiniccl {

namespace {

std::string Errno(const char* what) { return std::string(what) + ": " + std::strerror(errno); }

int MillisecondsLeft(Deadline deadline) {
  const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
      deadline - std::chrono::steady_clock::now());
  return left.count() <= 0 ? 0 : static_cast<int>(std::min<int64_t>(left.count(), INT32_MAX));
}

// The first address of host:port, for listening (passive) or connecting.
bool Resolve(const std::string& host, int port, bool passive, sockaddr_storage* address,
             socklen_t* length, std::string* why) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = passive ? AI_PASSIVE : 0;
  addrinfo* found = nullptr;
  const std::string service = std::to_string(port);
  const int status =
      getaddrinfo(host.empty() ? nullptr : host.c_str(), service.c_str(), &hints, &found);
  if (status != 0 || found == nullptr) {
    *why = "resolving " + host + ":" + service + ": " + gai_strerror(status);
    return false;
  }
  std::memcpy(address, found->ai_addr, found->ai_addrlen);
  *length = found->ai_addrlen;
  freeaddrinfo(found);
  return true;
}

// Sends all of data before the deadline.
bool SendAll(int socket, const void* data, size_t size, Deadline deadline, std::string* why) {
  const char* bytes = static_cast<const char*>(data);
  while (size > 0) {
    pollfd ready{socket, POLLOUT, 0};
    if (poll(&ready, 1, MillisecondsLeft(deadline)) <= 0) {
      *why = "the store did not take the request in time";
      return false;
    }
    const ssize_t sent = send(socket, bytes, size, MSG_NOSIGNAL);
    if (sent < 0 && errno == EINTR) continue;
    if (sent <= 0) {
      *why = Errno("sending to the store");
      return false;
    }
    bytes += sent;
    size -= static_cast<size_t>(sent);
  }
  return true;
}

// Receives exactly size bytes before the deadline.
bool ReceiveAll(int socket, void* data, size_t size, Deadline deadline, std::string* why) {
  char* bytes = static_cast<char*>(data);
  while (size > 0) {
    pollfd ready{socket, POLLIN, 0};
    if (poll(&ready, 1, MillisecondsLeft(deadline)) <= 0) {
      *why = "the store did not answer in time";
      return false;
    }
    const ssize_t received = recv(socket, bytes, size, 0);
    if (received < 0 && errno == EINTR) continue;
    if (received <= 0) {
      *why = received == 0 ? "the store closed the connection" : Errno("receiving from the store");
      return false;
    }
    bytes += received;
    size -= static_cast<size_t>(received);
  }
  return true;
}

void PutLength(std::string* out, size_t length) {
  const uint32_t value = static_cast<uint32_t>(length);
  for (int i = 0; i < 4; ++i) out->push_back(static_cast<char>((value >> (8 * i)) & 0xff));
}

uint32_t GetLength(const char* in) {
  uint32_t value = 0;
  for (int i = 0; i < 4; ++i)
    value |= static_cast<uint32_t>(static_cast<unsigned char>(in[i])) << (8 * i);
  return value;
}

// The server's side of one connection: bytes received and not yet parsed.
struct Connection {
  int socket = -1;
  std::string pending;
};

// What the server thread keeps.
struct StoreState {
  std::map<std::string, std::string> values;
  size_t total = 0;
  std::map<std::string, std::vector<int>> waiting;  // key -> sockets waiting in a get
};

// Sends a value to a client; a client that does not take it in a second is dropped by the caller.
bool Answer(int socket, const std::string& value) {
  std::string reply;
  PutLength(&reply, value.size());
  reply += value;
  std::string why;
  return SendAll(socket, reply.data(), reply.size(),
                 std::chrono::steady_clock::now() + std::chrono::seconds(1), &why);
}

// Parses and serves the complete requests of a connection. False: drop it (malformed, too large).
bool ServeRequests(Connection& connection, StoreState& state) {
  for (;;) {
    const std::string& in = connection.pending;
    if (in.size() < 5) return true;
    const char op = in[0];
    const size_t key_length = GetLength(in.data() + 1);
    if ((op != 'S' && op != 'G') || key_length > kStoreMaxKeyBytes) return false;
    size_t needed = 5 + key_length;
    size_t value_length = 0;
    if (op == 'S') {
      if (in.size() < needed + 4) return true;
      value_length = GetLength(in.data() + needed);
      if (value_length > kStoreMaxValueBytes) return false;
      needed += 4 + value_length;
    }
    if (in.size() < needed) return true;
    const std::string key = in.substr(5, key_length);
    if (op == 'S') {
      const std::string value = in.substr(5 + key_length + 4, value_length);
      const size_t previous = state.values.count(key) ? state.values[key].size() : 0;
      if (state.total - previous + value.size() > kStoreMaxTotalBytes) return false;
      state.total = state.total - previous + value.size();
      state.values[key] = value;
      const char ok = 1;
      std::string why;
      if (!SendAll(connection.socket, &ok, 1,
                   std::chrono::steady_clock::now() + std::chrono::seconds(1), &why)) {
        return false;
      }
      auto waiting = state.waiting.find(key);
      if (waiting != state.waiting.end()) {
        for (int socket : waiting->second) Answer(socket, value);
        state.waiting.erase(waiting);
      }
    } else if (auto found = state.values.find(key); found != state.values.end()) {
      if (!Answer(connection.socket, found->second)) return false;
    } else {
      state.waiting[key].push_back(connection.socket);
    }
    connection.pending.erase(0, needed);
  }
}

void Forget(StoreState& state, int socket) {
  for (auto it = state.waiting.begin(); it != state.waiting.end();) {
    auto& sockets = it->second;
    sockets.erase(std::remove(sockets.begin(), sockets.end(), socket), sockets.end());
    it = sockets.empty() ? state.waiting.erase(it) : std::next(it);
  }
}

}  // namespace

std::unique_ptr<TcpStoreServer> TcpStoreServer::Start(const std::string& host, int port,
                                                      std::string* why) {
  sockaddr_storage address{};
  socklen_t length = 0;
  if (!Resolve(host, port, true, &address, &length, why)) return nullptr;
  const int listener = socket(address.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (listener < 0) {
    *why = Errno("socket");
    return nullptr;
  }
  const int one = 1;
  setsockopt(listener, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  int wake[2] = {-1, -1};
  if (bind(listener, reinterpret_cast<sockaddr*>(&address), length) != 0 ||
      listen(listener, 128) != 0 || pipe2(wake, O_CLOEXEC) != 0) {
    *why = Errno(("listening on " + host + ":" + std::to_string(port)).c_str());
    close(listener);
    return nullptr;
  }
  sockaddr_storage bound{};
  socklen_t bound_length = sizeof bound;
  getsockname(listener, reinterpret_cast<sockaddr*>(&bound), &bound_length);
  const int bound_port =
      ntohs(bound.ss_family == AF_INET6 ? reinterpret_cast<sockaddr_in6*>(&bound)->sin6_port
                                        : reinterpret_cast<sockaddr_in*>(&bound)->sin_port);
  std::unique_ptr<TcpStoreServer> server(
      new TcpStoreServer(listener, wake[0], wake[1], bound_port));
  server->thread_ = std::thread([raw = server.get()] { raw->Serve(); });
  return server;
}

TcpStoreServer::TcpStoreServer(int listener, int wake_read, int wake_write, int port)
    : listener_(listener), wake_read_(wake_read), wake_write_(wake_write), port_(port) {}

TcpStoreServer::~TcpStoreServer() {
  const char stop = 1;
  while (write(wake_write_, &stop, 1) < 0 && errno == EINTR) {
  }
  if (thread_.joinable()) thread_.join();
  close(listener_);
  close(wake_read_);
  close(wake_write_);
}

void TcpStoreServer::Serve() {
  StoreState state;
  std::vector<Connection> connections;
  for (;;) {
    std::vector<pollfd> polled{{wake_read_, POLLIN, 0}, {listener_, POLLIN, 0}};
    for (const Connection& connection : connections) {
      polled.push_back({connection.socket, POLLIN, 0});
    }
    if (poll(polled.data(), polled.size(), -1) < 0) {
      if (errno == EINTR) continue;
      break;
    }
    if (polled[0].revents != 0) break;  // stopping
    if ((polled[1].revents & POLLIN) != 0) {
      const int accepted = accept4(listener_, nullptr, nullptr, SOCK_CLOEXEC);
      if (accepted >= 0 && static_cast<int>(connections.size()) < kStoreMaxConnections) {
        const int one = 1;
        setsockopt(accepted, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        connections.push_back(Connection{accepted, {}});
      } else if (accepted >= 0) {
        close(accepted);  // too many: refused
      }
    }
    std::vector<int> dropped;
    for (size_t i = 2; i < polled.size(); ++i) {
      if (polled[i].revents == 0) continue;
      Connection& connection = connections[i - 2];
      char buffer[65536];
      const ssize_t received = recv(connection.socket, buffer, sizeof buffer, 0);
      if (received <= 0 && !(received < 0 && errno == EINTR)) {
        dropped.push_back(connection.socket);
        continue;
      }
      if (received > 0) connection.pending.append(buffer, static_cast<size_t>(received));
      if (!ServeRequests(connection, state)) dropped.push_back(connection.socket);
    }
    for (int socket : dropped) {
      Forget(state, socket);
      close(socket);
      connections.erase(std::remove_if(connections.begin(), connections.end(),
                                       [&](const Connection& c) { return c.socket == socket; }),
                        connections.end());
    }
  }
  for (const Connection& connection : connections) close(connection.socket);
}

std::unique_ptr<TcpStoreClient> TcpStoreClient::Connect(const std::string& host, int port,
                                                        Deadline deadline, std::string* why) {
  sockaddr_storage address{};
  socklen_t length = 0;
  if (!Resolve(host, port, false, &address, &length, why)) return nullptr;
  for (;;) {
    const int socket_fd = socket(address.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (socket_fd < 0) {
      *why = Errno("socket");
      return nullptr;
    }
    if (connect(socket_fd, reinterpret_cast<sockaddr*>(&address), length) == 0) {
      const int one = 1;
      setsockopt(socket_fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
      return std::unique_ptr<TcpStoreClient>(new TcpStoreClient(socket_fd));
    }
    *why = Errno(("connecting to the store at " + host + ":" + std::to_string(port)).c_str());
    close(socket_fd);
    if (MillisecondsLeft(deadline) == 0) return nullptr;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));  // the server may start later
  }
}

TcpStoreClient::~TcpStoreClient() { close(socket_); }

bool TcpStoreClient::Set(const std::string& key, const std::string& value, Deadline deadline,
                         std::string* why) {
  if (key.size() > kStoreMaxKeyBytes || value.size() > kStoreMaxValueBytes) {
    *why = "the key or the value is larger than the store takes";
    return false;
  }
  std::string request(1, 'S');
  PutLength(&request, key.size());
  request += key;
  PutLength(&request, value.size());
  request += value;
  char ok = 0;
  if (!Usable(why)) return false;
  if (!SendAll(socket_, request.data(), request.size(), deadline, why) ||
      !ReceiveAll(socket_, &ok, 1, deadline, why)) {
    broken_ = true;
    return false;
  }
  if (ok != 1) *why = "the store refused the value";
  return ok == 1;
}

bool TcpStoreClient::Get(const std::string& key, std::string* value, Deadline deadline,
                         std::string* why) {
  if (key.size() > kStoreMaxKeyBytes) {
    *why = "the key is larger than the store takes";
    return false;
  }
  std::string request(1, 'G');
  PutLength(&request, key.size());
  request += key;
  char length[4];
  if (!Usable(why)) return false;
  if (!SendAll(socket_, request.data(), request.size(), deadline, why) ||
      !ReceiveAll(socket_, length, 4, deadline, why)) {
    if (*why == "the store did not answer in time") *why = "no value for \"" + key + "\" in time";
    broken_ = true;
    return false;
  }
  const uint32_t size = GetLength(length);
  if (size > kStoreMaxValueBytes) {
    *why = "the store answered a value larger than it takes";
    broken_ = true;
    return false;
  }
  value->assign(size, '\0');
  broken_ = !ReceiveAll(socket_, value->data(), size, deadline, why);
  return !broken_;
}

std::string TcpStoreClient::LocalAddress() const {
  sockaddr_storage address{};
  socklen_t length = sizeof address;
  char host[NI_MAXHOST] = "";
  if (getsockname(socket_, reinterpret_cast<sockaddr*>(&address), &length) != 0 ||
      getnameinfo(reinterpret_cast<sockaddr*>(&address), length, host, sizeof host, nullptr, 0,
                  NI_NUMERICHOST) != 0) {
    return "127.0.0.1";
  }
  return host;
}

bool TcpStoreClient::Usable(std::string* why) const {
  if (broken_) *why = "an earlier call on this connection to the store failed";
  return !broken_;
}

}  // namespace infiniccl
