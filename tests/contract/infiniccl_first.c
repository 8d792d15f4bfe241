/* InfiniCore's infiniccl.h first, then InfiniRT's infiniccl.h (C99): the operator enum, the
 * communicator type and the three functions are declared once, by whichever header came first, and
 * InfiniRT's additions use them. */
/* The order is the test: no formatter may sort these. */
/* clang-format off */
#include "infinicore_double/infiniccl_as_published.h"
#include <infiniccl.h>
/* clang-format on */

int InfinicclFirstAvg(void) { return (int)INFINICCL_AVG; }

/* The additions take the communicator type the other header declared. */
int InfinicclFirstRanks(infinicclComm_t comm) {
  int count = -1;
  return infinicclCommCount(comm, &count) == INFINI_STATUS_SUCCESS ? count : -1;
}

/* InfiniCore's prototype and InfiniRT's function are the same. */
infiniStatus_t (*InfinicclFirstAllReduce(void))(void*, void*, size_t, infiniDtype_t,
                                                infinicclReduceOp_t, infinicclComm_t,
                                                infinirtStream_t) {
  return &infinicclAllReduce;
}
