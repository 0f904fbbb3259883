// Whole files written so that a reader (or a crash) sees the old file or the new one, never half
// of one: checkpoints, JSON results.
#pragma once

#include <stdexcept>
#include <string>

namespace starcnn {

// The message names the file and the system's reason.
struct AtomicFileError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Writes `bytes` to `path` through a temporary file in the same directory: write, fsync, rename
// over `path`, fsync of the directory. On failure the temporary file is removed, an existing
// `path` is untouched, and AtomicFileError is thrown.
void write_file_atomically(const std::string &path, const std::string &bytes);

}  // namespace starcnn
