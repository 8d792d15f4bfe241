// libinfiniccl's rendezvous store (infiniccl/tcp_store.h) on loopback: values set by
// one client reach the others, a get waits for its key, eight clients meet, and everything is
// bounded: deadlines, sizes, malformed requests (which drop that connection only), a server that
// is not there yet or not at all.
#include "tcp_store.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <string>
#include <thread>
#include <vector>

namespace infiniccl {
namespace {

using std::chrono::milliseconds;

Deadline In(milliseconds time) { return std::chrono::steady_clock::now() + time; }

std::unique_ptr<TcpStoreServer> StartOnAnyPort() {
  std::string why;
  auto server = TcpStoreServer::Start("127.0.0.1", 0, &why);
  EXPECT_NE(server, nullptr) << why;
  return server;
}

std::unique_ptr<TcpStoreClient> ConnectTo(int port) {
  std::string why;
  auto client = TcpStoreClient::Connect("127.0.0.1", port, In(milliseconds(2000)), &why);
  EXPECT_NE(client, nullptr) << why;
  return client;
}

TEST(TcpStore, AValueSetByOneClientIsReadByAnother) {
  auto server = StartOnAnyPort();
  ASSERT_NE(server, nullptr);
  auto writer = ConnectTo(server->port());
  auto reader = ConnectTo(server->port());
  ASSERT_TRUE(writer && reader);
  std::string why;
  const std::string value("address\0of rank 0", 17);  // values are bytes, NULs included
  ASSERT_TRUE(writer->Set("rank0", value, In(milliseconds(2000)), &why)) << why;
  std::string read;
  ASSERT_TRUE(reader->Get("rank0", &read, In(milliseconds(2000)), &why)) << why;
  EXPECT_EQ(read, value);
  ASSERT_TRUE(writer->Set("rank0", "replaced", In(milliseconds(2000)), &why)) << why;
  ASSERT_TRUE(reader->Get("rank0", &read, In(milliseconds(2000)), &why)) << why;
  EXPECT_EQ(read, "replaced");
  EXPECT_EQ(writer->LocalAddress(), "127.0.0.1");  // the address the store was reached from
}

TEST(TcpStore, AGetWaitsForItsKey) {
  auto server = StartOnAnyPort();
  ASSERT_NE(server, nullptr);
  auto reader = ConnectTo(server->port());
  ASSERT_NE(reader, nullptr);
  std::thread writer([port = server->port()] {
    std::this_thread::sleep_for(milliseconds(100));
    auto client = ConnectTo(port);
    std::string why;
    if (client) {
      EXPECT_TRUE(client->Set("late", "here", In(milliseconds(2000)), &why)) << why;
    }
  });
  std::string read, why;
  const auto start = std::chrono::steady_clock::now();
  EXPECT_TRUE(reader->Get("late", &read, In(milliseconds(5000)), &why)) << why;
  EXPECT_GE(std::chrono::steady_clock::now() - start, milliseconds(90))
      << "answered before the set";
  EXPECT_EQ(read, "here");
  writer.join();
}

TEST(TcpStore, AGetWithoutAValueFailsAtItsDeadlineAndTheConnectionIsThenRefused) {
  auto server = StartOnAnyPort();
  ASSERT_NE(server, nullptr);
  auto reader = ConnectTo(server->port());
  ASSERT_NE(reader, nullptr);
  std::string read, why;
  const auto start = std::chrono::steady_clock::now();
  EXPECT_FALSE(reader->Get("never", &read, In(milliseconds(200)), &why));
  const auto waited = std::chrono::steady_clock::now() - start;
  EXPECT_GE(waited, milliseconds(150));
  EXPECT_LT(waited, milliseconds(2000));
  EXPECT_NE(why.find("never"), std::string::npos) << why;
  // Its answer may still come: the connection cannot be used again.
  auto writer = ConnectTo(server->port());
  ASSERT_NE(writer, nullptr);
  ASSERT_TRUE(writer->Set("never", "now", In(milliseconds(2000)), &why)) << why;
  EXPECT_FALSE(reader->Set("other", "value", In(milliseconds(2000)), &why));
  EXPECT_NE(why.find("earlier call"), std::string::npos) << why;
}

TEST(TcpStore, EightClientsMeet) {
  auto server = StartOnAnyPort();
  ASSERT_NE(server, nullptr);
  constexpr int kRanks = 8;
  std::vector<std::thread> ranks;
  std::vector<int> met(kRanks, 0);
  for (int rank = 0; rank < kRanks; ++rank) {
    ranks.emplace_back([&, rank] {
      auto client = ConnectTo(server->port());
      if (!client) return;
      std::string why;
      if (!client->Set("rank" + std::to_string(rank), std::to_string(rank * 11),
                       In(milliseconds(5000)), &why)) {
        return;
      }
      for (int peer = 0; peer < kRanks; ++peer) {
        std::string value;
        if (client->Get("rank" + std::to_string(peer), &value, In(milliseconds(5000)), &why) &&
            value == std::to_string(peer * 11)) {
          ++met[rank];
        }
      }
    });
  }
  for (std::thread& rank : ranks) rank.join();
  for (int rank = 0; rank < kRanks; ++rank) EXPECT_EQ(met[rank], kRanks) << "rank " << rank;
}

// A raw connection that sends bytes as they are.
int RawConnection(int port) {
  const int raw = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(static_cast<uint16_t>(port));
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  EXPECT_EQ(connect(raw, reinterpret_cast<sockaddr*>(&address), sizeof address), 0);
  return raw;
}

// Whether the server closed the raw connection (a read returns end of file within a second).
bool ClosedByServer(int raw) {
  timeval limit{1, 0};
  setsockopt(raw, SOL_SOCKET, SO_RCVTIMEO, &limit, sizeof limit);
  char byte;
  return recv(raw, &byte, 1, 0) == 0;
}

TEST(TcpStore, MalformedAndOversizedRequestsDropTheirConnectionOnly) {
  auto server = StartOnAnyPort();
  ASSERT_NE(server, nullptr);
  auto client = ConnectTo(server->port());
  ASSERT_NE(client, nullptr);
  std::string why;
  ASSERT_TRUE(client->Set("kept", "value", In(milliseconds(2000)), &why)) << why;

  const int unknown_op = RawConnection(server->port());
  ASSERT_EQ(send(unknown_op, "X\1\0\0\0k", 6, 0), 6);
  EXPECT_TRUE(ClosedByServer(unknown_op));
  close(unknown_op);
  const int long_key = RawConnection(server->port());
  ASSERT_EQ(send(long_key, "G\xff\xff\0\0", 5, 0), 5);  // a key of 65535 bytes announced
  EXPECT_TRUE(ClosedByServer(long_key));
  close(long_key);

  // Refused by the client before anything is sent.
  EXPECT_FALSE(
      client->Set(std::string(kStoreMaxKeyBytes + 1, 'k'), "v", In(milliseconds(2000)), &why));
  EXPECT_FALSE(
      client->Set("k", std::string(kStoreMaxValueBytes + 1, 'v'), In(milliseconds(2000)), &why));
  auto other = ConnectTo(server->port());
  ASSERT_NE(other, nullptr);
  std::string read;
  EXPECT_TRUE(other->Get("kept", &read, In(milliseconds(2000)), &why)) << why;
  EXPECT_EQ(read, "value");
}

TEST(TcpStore, AClientWaitsForAServerThatStartsLateAndGivesUpOnOneThatNeverDoes) {
  int port = 0;
  {
    auto probe = StartOnAnyPort();  // a port that was free a moment ago
    ASSERT_NE(probe, nullptr);
    port = probe->port();
  }
  std::unique_ptr<TcpStoreServer> late;
  std::thread starter([&] {
    std::this_thread::sleep_for(milliseconds(150));
    std::string why;
    late = TcpStoreServer::Start("127.0.0.1", port, &why);
    EXPECT_NE(late, nullptr) << why;
  });
  std::string why;
  auto client = TcpStoreClient::Connect("127.0.0.1", port, In(milliseconds(5000)), &why);
  starter.join();
  ASSERT_NE(client, nullptr) << why;
  EXPECT_TRUE(client->Set("k", "v", In(milliseconds(2000)), &why)) << why;
  late.reset();

  const auto start = std::chrono::steady_clock::now();
  EXPECT_EQ(TcpStoreClient::Connect("127.0.0.1", port, In(milliseconds(200)), &why), nullptr);
  EXPECT_LT(std::chrono::steady_clock::now() - start, milliseconds(2000));
  EXPECT_NE(why.find("connecting"), std::string::npos) << why;
}

}  // namespace
}  // namespace infiniccl
