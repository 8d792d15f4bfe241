// Communicators whose ranks are in several processes (NCCL's model), made through a rendezvous
// store (tcp_store.h):
//   - GetUniqueId serves a store in the calling process and writes its address into the id;
//   - CommInitFromEnv has rank 0 serve it at MASTER_ADDR:MASTER_PORT, as torchrun expects;
//   - every rank then joins through it (Join): it publishes its device type and whether its
//     engine is here, all ranks pick the same engine from what they all published (the type's own
//     when every rank is of one type and has it; otherwise the CPU engine, staging device buffers
//     through host memory), and that engine's CommInitRank meets the other ranks through the same
//     store, under keys of this communicator.
#include <ifaddrs.h>
#include <net/if.h>
#include <netdb.h>
#include <sys/socket.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "infiniccl_internal.h"
#include "tcp_store.h"

namespace infiniccl {

namespace {

// The id's bytes: a magic, the store's port, a nonce naming the job's keys, and the store's host.
constexpr char kIdMagic[8] = {'I', 'C', 'C', 'L', 'I', 'D', '1', '\0'};
struct IdLayout {
  char magic[8];
  uint32_t port;
  uint32_t reserved;
  uint64_t nonce;
  char host[INFINICCL_UNIQUE_ID_BYTES - 24];
};
static_assert(sizeof(IdLayout) == INFINICCL_UNIQUE_ID_BYTES, "the id's layout fills the id");

constexpr int kDefaultMasterPort = 29500;  // torchrun's

std::mutex g_servers_mutex;
// The stores this process serves. They stay until the process exits: the process that made an id
// cannot tell when the last rank of its job has finished meeting the others.
std::vector<std::unique_ptr<TcpStoreServer>>& Servers() {  // under g_servers_mutex
  static auto* servers = new std::vector<std::unique_ptr<TcpStoreServer>>();
  return *servers;
}
// The stores served at MASTER_PORT, by port, and how many communicators each process made from
// the environment (every process makes them in the same order: the count names their keys).
std::map<int, TcpStoreServer*>& MasterStores() {  // under g_servers_mutex
  static auto* stores = new std::map<int, TcpStoreServer*>();
  return *stores;
}
int g_from_env_count = 0;  // under g_servers_mutex

Deadline DeadlineIn(long milliseconds) {
  return std::chrono::steady_clock::now() + std::chrono::milliseconds(milliseconds);
}

// This host's address for other hosts: INFINICCL_SOCKET_ADDR, else the first IPv4 address of an
// interface that is up and not loopback, else loopback (a job on one host).
std::string HostAddress() {
  if (const char* chosen = secure_getenv("INFINICCL_SOCKET_ADDR"); chosen && *chosen) return chosen;
  ifaddrs* interfaces = nullptr;
  std::string found = "127.0.0.1";
  if (getifaddrs(&interfaces) != 0) return found;
  for (const ifaddrs* i = interfaces; i != nullptr; i = i->ifa_next) {
    if (i->ifa_addr == nullptr || i->ifa_addr->sa_family != AF_INET) continue;
    if ((i->ifa_flags & IFF_UP) == 0 || (i->ifa_flags & IFF_LOOPBACK) != 0) continue;
    char host[NI_MAXHOST] = "";
    if (getnameinfo(i->ifa_addr, sizeof(sockaddr_in), host, sizeof host, nullptr, 0,
                    NI_NUMERICHOST) == 0) {
      found = host;
      break;
    }
  }
  freeifaddrs(interfaces);
  return found;
}

// The store lent to an engine: the rank's connection, with the communicator's key prefix and the
// deadline of the whole rendezvous.
struct LentStore {
  TcpStoreClient* client;
  std::string prefix;
  Deadline deadline;
  std::string local_address;
};

void Say(char* why, size_t why_size, const std::string& text) {
  if (why != nullptr && why_size > 0) std::snprintf(why, why_size, "%s", text.c_str());
}

int LentSet(void* context, const char* key, const void* value, size_t size, char* why,
            size_t why_size) {
  auto* store = static_cast<LentStore*>(context);
  std::string problem;
  if (store->client->Set(store->prefix + key, std::string(static_cast<const char*>(value), size),
                         store->deadline, &problem)) {
    return 0;
  }
  Say(why, why_size, problem);
  return 1;
}

int LentGet(void* context, const char* key, void* value, size_t capacity, size_t* size, char* why,
            size_t why_size) {
  auto* store = static_cast<LentStore*>(context);
  std::string problem;
  std::string read;
  if (!store->client->Get(store->prefix + key, &read, store->deadline, &problem)) {
    Say(why, why_size, problem);
    return 1;
  }
  std::memcpy(value, read.data(), std::min(capacity, read.size()));
  *size = read.size();
  return 0;
}

// What one rank tells the others before an engine is chosen: its device type and whether that
// type's engine, able to span processes, is here.
std::string Announcement(infiniDevice_t type, bool has_engine) {
  return std::to_string(static_cast<int>(type)) + (has_engine ? "+" : "-");
}

// The engine every rank picks from all ranks' announcements: the type's own when all are of one
// type and have it; otherwise the CPU engine, which stages other devices' buffers.
bool OwnEngineForAll(const std::vector<std::string>& announcements) {
  for (const std::string& each : announcements) {
    if (each != announcements.front() || each.back() != '+') return false;
  }
  return true;
}

const Engine* MultiProcessEngine(infiniDevice_t type) {
  std::string ignored;
  const Engine* engine = EngineFor(type, &ignored);
  if (engine == nullptr ||
      engine->table->struct_size <= offsetof(infinicclBackendTable, CommInitRank) ||
      engine->table->CommInitRank == nullptr) {
    return nullptr;
  }
  return engine;
}

// One rank's CommInitRank of `engine`, meeting the other ranks through the store `client` reaches
// (its keys under `prefix`), by the deadline; *why says why it failed.
infiniStatus_t EngineInitRank(const Engine* engine, int nranks, int rank, int ordinal,
                              TcpStoreClient* client, const std::string& prefix, Deadline deadline,
                              infinicclBackendComm_t* backend, std::string* why) {
  LentStore lent{client, prefix, deadline, client->LocalAddress()};
  const infinicclBackendStore store{&lent, lent.local_address.c_str(), &LentSet, &LentGet};
  const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
      deadline - std::chrono::steady_clock::now());
  char engine_why[INFINICCL_BACKEND_WHY_BYTES] = "";
  const infiniStatus_t status =
      engine->table->CommInitRank(nranks, rank, ordinal, std::max<long>(1, left.count()), &store,
                                  backend, engine_why, sizeof engine_why);
  engine_why[sizeof engine_why - 1] = '\0';
  *why = engine_why;
  return status;
}

// Makes this process's rank of a communicator through the store `client` reaches, its keys under
// `prefix`.
infiniStatus_t Join(const char* function, int nranks, int rank, TcpStoreClient* client,
                    const std::string& prefix, Deadline deadline, infinicclComm_t* comm) {
  int ordinal = -1;
  infiniDevice_t type = INFINI_DEVICE_CPU;
  if (infinirtGetDevice(&ordinal) != infinirtSuccess ||
      infinirtDeviceGetType(&type, ordinal) != infinirtSuccess) {
    const std::string said = infinirtGetErrorString(infinirtGetLastError());
    return Fail(INFINI_STATUS_DEVICE_NOT_FOUND,
                std::string(function) + ": no current InfiniRT device (" + said + ")");
  }
  const Engine* own = MultiProcessEngine(type);
  std::string why;
  if (!client->Set(prefix + "join/" + std::to_string(rank), Announcement(type, own != nullptr),
                   deadline, &why)) {
    return Fail(INFINI_STATUS_INTERNAL_ERROR, std::string(function) + ": " + why);
  }
  std::vector<std::string> announcements(nranks);
  for (int r = 0; r < nranks; ++r) {
    if (!client->Get(prefix + "join/" + std::to_string(r), &announcements[r], deadline, &why)) {
      return Fail(
          INFINI_STATUS_INTERNAL_ERROR,
          std::string(function) + ": rank " + std::to_string(r) + " did not join (" + why + ")");
    }
  }
  const bool staged = !OwnEngineForAll(announcements);
  const Engine* engine = staged ? MultiProcessEngine(INFINI_DEVICE_CPU) : own;
  if (engine == nullptr) {
    return Fail(INFINI_STATUS_DEVICE_TYPE_NOT_SUPPORTED,
                std::string(function) +
                    ": the ranks need the CPU collective engine (libinfiniccl_cpu.so), which is "
                    "not here or cannot span processes");
  }
  infinicclBackendComm_t backend = nullptr;
  if (auto status =
          EngineInitRank(engine, nranks, rank, ordinal, client, prefix, deadline, &backend, &why)) {
    return Fail(status, std::string(function) + ": " + why);
  }
  *comm = Register(engine, backend, type, rank, nranks, ordinal, staged);
  return INFINI_STATUS_SUCCESS;
}

bool CheckRanks(const char* function, int nranks, int rank, infiniStatus_t* status) {
  if (nranks <= 0 || rank < 0 || rank >= nranks) {
    *status =
        Fail(INFINI_STATUS_BAD_PARAM, std::string(function) + ": rank " + std::to_string(rank) +
                                          " of " + std::to_string(nranks) + " ranks");
    return false;
  }
  return true;
}

// A variable of the launcher's, read as a number; `fallback` when unset.
bool NumberFromEnv(const char* name, long fallback, long* value) {
  const char* text = secure_getenv(name);
  if (text == nullptr || *text == '\0') {
    *value = fallback;
    return true;
  }
  char* end = nullptr;
  *value = std::strtol(text, &end, 10);
  return *end == '\0';
}

// RANK and WORLD_SIZE (torchrun), else OpenMPI's OMPI_COMM_WORLD_RANK and OMPI_COMM_WORLD_SIZE.
bool RanksFromEnv(long* rank, long* size, std::string* why) {
  const bool torchrun = secure_getenv("RANK") != nullptr;
  const char* rank_name = torchrun ? "RANK" : "OMPI_COMM_WORLD_RANK";
  const char* size_name = torchrun ? "WORLD_SIZE" : "OMPI_COMM_WORLD_SIZE";
  if (secure_getenv(rank_name) == nullptr || secure_getenv(size_name) == nullptr) {
    *why = "neither RANK and WORLD_SIZE nor OMPI_COMM_WORLD_RANK and OMPI_COMM_WORLD_SIZE are set";
    return false;
  }
  if (!NumberFromEnv(rank_name, -1, rank) || !NumberFromEnv(size_name, -1, size) || *size <= 0 ||
      *size > (1 << 20) || *rank < 0 || *rank >= *size) {
    *why = std::string(rank_name) + "=" + secure_getenv(rank_name) + " and " + size_name + "=" +
           secure_getenv(size_name) + " are no rank and size";
    return false;
  }
  return true;
}

// Rank 0's store at MASTER_PORT, started by the first communicator made from the environment.
bool ServeMasterStore(int port, std::string* why) {
  std::lock_guard<std::mutex> lock(g_servers_mutex);
  if (MasterStores().count(port) != 0) return true;
  auto server = TcpStoreServer::Start("", port, why);
  if (server == nullptr) return false;
  MasterStores()[port] = server.get();
  Servers().push_back(std::move(server));
  return true;
}

}  // namespace

// The ranks of one process on devices whose type has no engine that serves them here: the CPU
// engine's ranks, meeting over loopback through a store of this call, each made on a thread of
// its own (a rank's CommInitRank returns once every rank has joined). Their buffers are staged
// through pinned host memory.
infiniStatus_t StagedCommInitAll(infiniDevice_t type, const std::vector<int>& ordinals,
                                 infinicclComm_t* comms, const std::string& why_no_engine) {
  const Engine* cpu = MultiProcessEngine(INFINI_DEVICE_CPU);
  if (cpu == nullptr) {
    return Fail(INFINI_STATUS_DEVICE_TYPE_NOT_SUPPORTED,
                "CommInitAll: " + why_no_engine +
                    "; the CPU collective engine, which would stand in, is not here or cannot");
  }
  std::string why;
  auto server = TcpStoreServer::Start("127.0.0.1", 0, &why);
  if (server == nullptr) {
    return Fail(INFINI_STATUS_INTERNAL_ERROR, "CommInitAll: serving the rendezvous: " + why);
  }
  const int nranks = static_cast<int>(ordinals.size());
  const Deadline deadline = DeadlineIn(TimeoutMs());
  std::vector<infinicclBackendComm_t> made(nranks, nullptr);
  std::vector<infiniStatus_t> statuses(nranks, INFINI_STATUS_INTERNAL_ERROR);
  std::vector<std::string> whys(nranks);
  std::vector<std::thread> threads;
  for (int r = 0; r < nranks; ++r) {
    threads.emplace_back([&, r] {
      infinirtSetDevice(ordinals[r]);  // the rank's stream and staging memory are its device's
      auto client = TcpStoreClient::Connect("127.0.0.1", server->port(), deadline, &whys[r]);
      if (client == nullptr) return;
      statuses[r] = EngineInitRank(cpu, nranks, r, ordinals[r], client.get(), "", deadline,
                                   &made[r], &whys[r]);
    });
  }
  for (std::thread& thread : threads) thread.join();
  for (int r = 0; r < nranks; ++r) {
    if (statuses[r] == INFINI_STATUS_SUCCESS) continue;
    for (infinicclBackendComm_t comm : made) {
      if (comm != nullptr) cpu->table->CommDestroy(comm);
    }
    return Fail(statuses[r], "CommInitAll (through the CPU engine, as " + why_no_engine +
                                 "): rank " + std::to_string(r) + ": " + whys[r]);
  }
  for (int r = 0; r < nranks; ++r) {
    comms[r] = Register(cpu, made[r], type, r, nranks, ordinals[r], true);
  }
  return INFINI_STATUS_SUCCESS;
}

}  // namespace infiniccl

using infiniccl::Fail;

extern "C" {

infiniStatus_t infinicclGetUniqueId(infinicclUniqueId* id) {
  if (id == nullptr) return Fail(INFINI_STATUS_NULL_POINTER, "GetUniqueId: id is NULL");
  std::string why;
  auto server = infiniccl::TcpStoreServer::Start("", 0, &why);
  if (server == nullptr) {
    return Fail(INFINI_STATUS_INTERNAL_ERROR, "GetUniqueId: serving the rendezvous: " + why);
  }
  infiniccl::IdLayout layout{};
  std::memcpy(layout.magic, infiniccl::kIdMagic, sizeof layout.magic);
  layout.port = static_cast<uint32_t>(server->port());
  layout.nonce = std::random_device{}() * (uint64_t{1} << 32) + std::random_device{}();
  std::snprintf(layout.host, sizeof layout.host, "%s", infiniccl::HostAddress().c_str());
  static_assert(sizeof *id == sizeof layout, "");
  std::memcpy(id, &layout, sizeof layout);
  std::lock_guard<std::mutex> lock(infiniccl::g_servers_mutex);
  infiniccl::Servers().push_back(std::move(server));
  return INFINI_STATUS_SUCCESS;
}

infiniStatus_t infinicclCommInitRank(infinicclComm_t* comm, int nranks, infinicclUniqueId id,
                                     int rank) {
  if (comm == nullptr) return Fail(INFINI_STATUS_NULL_POINTER, "CommInitRank: comm is NULL");
  infiniStatus_t status = INFINI_STATUS_SUCCESS;
  if (!infiniccl::CheckRanks("CommInitRank", nranks, rank, &status)) return status;
  infiniccl::IdLayout layout;
  std::memcpy(&layout, &id, sizeof layout);
  layout.host[sizeof layout.host - 1] = '\0';
  if (std::memcmp(layout.magic, infiniccl::kIdMagic, sizeof layout.magic) != 0 ||
      layout.port == 0 || layout.port > 65535) {
    return Fail(INFINI_STATUS_BAD_PARAM, "CommInitRank: id was not made by infinicclGetUniqueId");
  }
  const infiniccl::Deadline deadline = infiniccl::DeadlineIn(infiniccl::TimeoutMs());
  std::string why;
  auto client = infiniccl::TcpStoreClient::Connect(layout.host, static_cast<int>(layout.port),
                                                   deadline, &why);
  if (client == nullptr) return Fail(INFINI_STATUS_INTERNAL_ERROR, "CommInitRank: " + why);
  return infiniccl::Join("CommInitRank", nranks, rank, client.get(),
                         std::to_string(layout.nonce) + "/", deadline, comm);
}

infiniStatus_t infinicclCommInitFromEnv(infinicclComm_t* comm) {
  if (comm == nullptr) return Fail(INFINI_STATUS_NULL_POINTER, "CommInitFromEnv: comm is NULL");
  long rank = 0, size = 0, port = 0;
  std::string why;
  if (!infiniccl::RanksFromEnv(&rank, &size, &why)) {
    return Fail(INFINI_STATUS_BAD_PARAM, "CommInitFromEnv: " + why);
  }
  if (!infiniccl::NumberFromEnv("MASTER_PORT", infiniccl::kDefaultMasterPort, &port) || port <= 0 ||
      port > 65535) {
    return Fail(INFINI_STATUS_BAD_PARAM, "CommInitFromEnv: MASTER_PORT is no port");
  }
  const char* master = secure_getenv("MASTER_ADDR");
  const std::string host = master != nullptr && *master != '\0' ? master : "127.0.0.1";
  if (rank == 0 && !infiniccl::ServeMasterStore(static_cast<int>(port), &why)) {
    return Fail(INFINI_STATUS_INTERNAL_ERROR,
                "CommInitFromEnv: rank 0 cannot serve the rendezvous at port " +
                    std::to_string(port) + ": " + why);
  }
  int generation = 0;
  {
    std::lock_guard<std::mutex> lock(infiniccl::g_servers_mutex);
    generation = infiniccl::g_from_env_count++;
  }
  const infiniccl::Deadline deadline = infiniccl::DeadlineIn(infiniccl::TimeoutMs());
  auto client = infiniccl::TcpStoreClient::Connect(host, static_cast<int>(port), deadline, &why);
  if (client == nullptr) return Fail(INFINI_STATUS_INTERNAL_ERROR, "CommInitFromEnv: " + why);
  return infiniccl::Join("CommInitFromEnv", static_cast<int>(size), static_cast<int>(rank),
                         client.get(), "env" + std::to_string(generation) + "/", deadline, comm);
}

}  // extern "C"
