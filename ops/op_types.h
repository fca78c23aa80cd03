/* op_types: what every op family's header uses: the OP_FAMILY line the
 * registry is generated from, and parameter pieces shared by families. */
#ifndef OP_TYPES_H
#define OP_TYPES_H

#include <stdint.h>

#include "ops/op_act.h"

/* OP_FAMILY(family, params_type, KIND, ...): one line in an op family's
 * header, read by ops/op_registry.cmake: the family's name (its union
 * member, its ref_family_<family> and gb_family_<family>), the type of its
 * parameters, and the op kinds it runs (each has an op_def_<KIND> in the
 * family's .c file). It expands to nothing in C. */
#define OP_FAMILY(...)

#define OP_MAX_SPATIAL 3

typedef enum op_auto_pad {
  OP_PAD_NOTSET = 0,
  OP_PAD_SAME_UPPER,
  OP_PAD_SAME_LOWER,
  OP_PAD_VALID,
} op_auto_pad;

#endif
