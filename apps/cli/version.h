// What `--version` prints for every starcnn program: starcnn's version and git commit, and the
// versions of the libraries it runs on (StarPU and which build of it, CUDA runtime, cuDNN,
// OpenBLAS). Needs no GPU and does not start StarPU.
#pragma once

#include <string>

namespace starcnn {

// Lines "key: value", the first "PROGRAM (starcnn) VERSION"; keys: commit, starpu, cuda runtime,
// cudnn, openblas.
std::string version_text(const std::string &program);

// True when the libstarpu loaded in this process was built with FxT (it then defines
// starpu_fxt_is_enabled); the build linked may differ (train --trace restarts on another).
bool loaded_starpu_has_fxt();

}  // namespace starcnn
