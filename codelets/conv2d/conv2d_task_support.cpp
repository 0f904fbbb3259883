#include "codelets/conv2d/conv2d_task_support.h"

#include "codelets/conv2d/sample_groups.h"

namespace starcnn {

ColScratch::ColScratch(const Conv2dShape &shape)
    : ScratchVector(cpu_col_floats(shape), sizeof(float)) {}

}  // namespace starcnn
