// The collective calls: each is validated here (communicator, buffers, count, dtype, op, root or
// peer, the stream's device) and handed to the communicator's engine. Groups are tracked per
// thread; an engine learns of a group when the group's first call to it is made.
#include <algorithm>
#include <string>
#include <vector>

#include "infiniccl_internal.h"

namespace infiniccl {

namespace {

thread_local int t_group_depth = 0;
thread_local std::vector<const Engine*> t_group_engines;  // told GroupStart in this group

// The dtypes a reduction computes on: integers and floating point, not bytes, booleans, F8 or
// complex numbers.
bool Reducible(infiniDtype_t dtype) {
  switch (dtype) {
    case INFINI_DTYPE_I8:
    case INFINI_DTYPE_I16:
    case INFINI_DTYPE_I32:
    case INFINI_DTYPE_I64:
    case INFINI_DTYPE_U8:
    case INFINI_DTYPE_U16:
    case INFINI_DTYPE_U32:
    case INFINI_DTYPE_U64:
    case INFINI_DTYPE_F16:
    case INFINI_DTYPE_BF16:
    case INFINI_DTYPE_F32:
    case INFINI_DTYPE_F64:
      return true;
    default:
      return false;
  }
}

const char* CallName(infinicclCallKind_t kind) {
  switch (kind) {
#define INFINICCL_CALL_NAME_(name, reduces) \
  case INFINICCL_CALL_##name:               \
    return #name;
    INFINICCL_CALLS(INFINICCL_CALL_NAME_)
#undef INFINICCL_CALL_NAME_
    default:
      return "?";
  }
}

// The elements each buffer holds: what the call reads from sendbuf and writes to recvbuf.
void BufferElements(const infinicclBackendCall& call, int nranks, size_t* send, size_t* recv) {
  const size_t all = call.count * static_cast<size_t>(nranks);
  *send = call.kind == INFINICCL_CALL_ReduceScatter ? all
          : call.kind == INFINICCL_CALL_Recv        ? 0
                                                    : call.count;
  *recv = call.kind == INFINICCL_CALL_AllGather ? all
          : call.kind == INFINICCL_CALL_Send    ? 0
                                                : call.count;
}

infiniStatus_t CheckCall(infinicclComm_t comm, const infinicclBackendCall& call,
                         infinirtStream_t stream, const std::string& name) {
  if (auto status = CheckComm(comm, name.c_str())) return status;
  if (infinirtDtypeSize(call.dtype) == 0) {
    return Fail(INFINI_STATUS_BAD_PARAM,
                name + ": dtype " + std::to_string(static_cast<int>(call.dtype)) + " has no size");
  }
  if (infinicclCallReduces(call.kind)) {
    if (!Reducible(call.dtype)) {
      return Fail(
          INFINI_STATUS_BAD_PARAM,
          name + ": dtype " + std::to_string(static_cast<int>(call.dtype)) + " cannot be reduced");
    }
    if (static_cast<int>(call.op) < 0 || static_cast<int>(call.op) >= INFINICCL_REDUCE_OP_COUNT) {
      return Fail(INFINI_STATUS_BAD_PARAM,
                  name + ": op " + std::to_string(static_cast<int>(call.op)) + " is no operator");
    }
  }
  const bool has_root = call.kind == INFINICCL_CALL_Broadcast ||
                        call.kind == INFINICCL_CALL_Reduce || call.kind == INFINICCL_CALL_Send ||
                        call.kind == INFINICCL_CALL_Recv;
  if (has_root && (call.root < 0 || call.root >= comm->nranks)) {
    return Fail(INFINI_STATUS_BAD_PARAM, name + ": rank " + std::to_string(call.root) +
                                             " is not in [0, " + std::to_string(comm->nranks) +
                                             ")");
  }
  size_t send = 0, recv = 0;
  BufferElements(call, comm->nranks, &send, &recv);
  const bool reads =
      send > 0 && !(call.kind == INFINICCL_CALL_Broadcast && call.root != comm->rank);
  const bool writes = recv > 0 && !(call.kind == INFINICCL_CALL_Reduce && call.root != comm->rank);
  if ((reads && call.sendbuf == nullptr) || (writes && call.recvbuf == nullptr)) {
    return Fail(INFINI_STATUS_NULL_POINTER, name + ": a buffer it uses is NULL");
  }
  int device = -1;
  if (infinirtStreamGetDevice(stream, &device) != infinirtSuccess) {
    infinirtGetLastError();
    return Fail(INFINI_STATUS_BAD_PARAM, name + ": the stream is not a live stream");
  }
  if (device != comm->ordinal) {
    return Fail(INFINI_STATUS_BAD_PARAM, name + ": the stream belongs to device " +
                                             std::to_string(device) + ", the rank to device " +
                                             std::to_string(comm->ordinal));
  }
  return INFINI_STATUS_SUCCESS;
}

// Tells the engine of a call made inside a group that a group is open, once per group.
infiniStatus_t JoinGroup(const Engine& engine) {
  if (t_group_depth == 0) return INFINI_STATUS_SUCCESS;
  if (std::find(t_group_engines.begin(), t_group_engines.end(), &engine) != t_group_engines.end()) {
    return INFINI_STATUS_SUCCESS;
  }
  if (auto status = engine.table->GroupStart()) {
    return Fail(status, std::string("GroupStart of engine ") + engine.table->name + " failed");
  }
  t_group_engines.push_back(&engine);
  return INFINI_STATUS_SUCCESS;
}

infiniStatus_t Issue(infinicclComm_t comm, const infinicclBackendCall& call,
                     infinirtStream_t stream) {
  const std::string name = CallName(call.kind);
  if (auto status = CheckCall(comm, call, stream, name)) return status;
  if (auto status = JoinGroup(*comm->engine)) return status;
  char why[INFINICCL_BACKEND_WHY_BYTES] = "";
  const infiniStatus_t status =
      comm->engine->table->Call(comm->backend, &call, stream, why, sizeof why);
  if (status != INFINI_STATUS_SUCCESS) {
    why[sizeof why - 1] = '\0';
    return Fail(status, name + ": " + why);
  }
  return INFINI_STATUS_SUCCESS;
}

infinicclBackendCall MakeCall(infinicclCallKind_t kind, const void* sendbuf, void* recvbuf,
                              size_t count, infiniDtype_t dtype, infinicclReduceOp_t op, int root) {
  infinicclBackendCall call{};
  call.kind = kind;
  call.sendbuf = sendbuf;
  call.recvbuf = recvbuf;
  call.count = count;
  call.dtype = dtype;
  call.op = op;
  call.root = root;
  return call;
}

}  // namespace

}  // namespace infiniccl

using infiniccl::Issue;
using infiniccl::MakeCall;

extern "C" {

infiniStatus_t infinicclAllReduce(void* sendbuf, void* recvbuf, size_t count,
                                  infiniDtype_t datatype, infinicclReduceOp_t op,
                                  infinicclComm_t comm, infinirtStream_t stream) {
  return Issue(comm, MakeCall(INFINICCL_CALL_AllReduce, sendbuf, recvbuf, count, datatype, op, 0),
               stream);
}

infiniStatus_t infinicclBroadcast(const void* sendbuf, void* recvbuf, size_t count,
                                  infiniDtype_t datatype, int root, infinicclComm_t comm,
                                  infinirtStream_t stream) {
  return Issue(
      comm,
      MakeCall(INFINICCL_CALL_Broadcast, sendbuf, recvbuf, count, datatype, INFINICCL_SUM, root),
      stream);
}

infiniStatus_t infinicclReduce(const void* sendbuf, void* recvbuf, size_t count,
                               infiniDtype_t datatype, infinicclReduceOp_t op, int root,
                               infinicclComm_t comm, infinirtStream_t stream) {
  return Issue(comm, MakeCall(INFINICCL_CALL_Reduce, sendbuf, recvbuf, count, datatype, op, root),
               stream);
}

infiniStatus_t infinicclAllGather(const void* sendbuf, void* recvbuf, size_t sendcount,
                                  infiniDtype_t datatype, infinicclComm_t comm,
                                  infinirtStream_t stream) {
  return Issue(
      comm,
      MakeCall(INFINICCL_CALL_AllGather, sendbuf, recvbuf, sendcount, datatype, INFINICCL_SUM, 0),
      stream);
}

infiniStatus_t infinicclReduceScatter(const void* sendbuf, void* recvbuf, size_t recvcount,
                                      infiniDtype_t datatype, infinicclReduceOp_t op,
                                      infinicclComm_t comm, infinirtStream_t stream) {
  return Issue(comm,
               MakeCall(INFINICCL_CALL_ReduceScatter, sendbuf, recvbuf, recvcount, datatype, op, 0),
               stream);
}

infiniStatus_t infinicclSend(const void* sendbuf, size_t count, infiniDtype_t datatype, int peer,
                             infinicclComm_t comm, infinirtStream_t stream) {
  return Issue(
      comm, MakeCall(INFINICCL_CALL_Send, sendbuf, nullptr, count, datatype, INFINICCL_SUM, peer),
      stream);
}

infiniStatus_t infinicclRecv(void* recvbuf, size_t count, infiniDtype_t datatype, int peer,
                             infinicclComm_t comm, infinirtStream_t stream) {
  return Issue(
      comm, MakeCall(INFINICCL_CALL_Recv, nullptr, recvbuf, count, datatype, INFINICCL_SUM, peer),
      stream);
}

infiniStatus_t infinicclGroupStart(void) {
  ++infiniccl::t_group_depth;
  return INFINI_STATUS_SUCCESS;
}

// The outermost GroupEnd issues the group on every engine it reached; the first failure is the
// answer, and every engine is told the group ended.
infiniStatus_t infinicclGroupEnd(void) {
  if (infiniccl::t_group_depth == 0) {
    return infiniccl::Fail(INFINI_STATUS_BAD_PARAM, "GroupEnd: no group is open");
  }
  if (--infiniccl::t_group_depth > 0) return INFINI_STATUS_SUCCESS;
  std::vector<const infiniccl::Engine*> engines;
  engines.swap(infiniccl::t_group_engines);
  infiniStatus_t answer = INFINI_STATUS_SUCCESS;
  for (const infiniccl::Engine* engine : engines) {
    char why[INFINICCL_BACKEND_WHY_BYTES] = "";
    const infiniStatus_t status = engine->table->GroupEnd(why, sizeof why);
    if (status != INFINI_STATUS_SUCCESS && answer == INFINI_STATUS_SUCCESS) {
      why[sizeof why - 1] = '\0';
      answer = infiniccl::Fail(status, std::string("GroupEnd: ") + why);
    }
  }
  return answer;
}

}  // extern "C"
