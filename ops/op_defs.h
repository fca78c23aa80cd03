/* The op_def of every op in OP_LIST, defined in its op family's file. */
#ifndef OP_DEFS_H
#define OP_DEFS_H

#include "ops/ops.h"

#define OP_DECL_(kind, family) extern const op_def op_def_##kind;
OP_LIST(OP_DECL_)
#undef OP_DECL_

#endif
