/* The types of operators' scalar parameters beyond C's own, for the operators' headers. */
#ifndef __INFINIOP_OPERATOR_TYPES_API_H__
#define __INFINIOP_OPERATOR_TYPES_API_H__

/* bool, for the scalars of the operators that take one (TopK's largest and sorted). */
#ifndef __cplusplus
#include <stdbool.h>
#endif

/* RoPE's pairing of the elements it rotates. */
typedef enum {
  INFINIOP_ROPE_ALGO_GPT_J = 0,    /* pairs of neighbours: (2i, 2i + 1) */
  INFINIOP_ROPE_ALGO_GPT_NEOX = 1, /* pairs across the halves: (i, i + dhead / 2) */
  INFINIOP_ROPE_ALGO_COUNT = 2
} infiniopRoPEAlgo_t;

#endif
