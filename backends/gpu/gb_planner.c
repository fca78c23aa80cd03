/* gb_planner: op families the GPU never runs because the planner computes
 * them when a plan is built (their outputs depend on shapes only). */
#include "backends/gpu/gb_internal.h"

const gb_family gb_family_shape = GB_NOT_ON_GPU(shape);
const gb_family gb_family_fill = GB_NOT_ON_GPU(fill); /* inputs are values: always computed at plan time */
const gb_family gb_family_scan = GB_NOT_ON_GPU(scan); /* position ids from shapes: plan time */
