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
// `path` is untouched, and AtomicFileError is thrown. After a successful write, temporary files
// that an earlier write to the same path left behind (killed before its rename: PATH.tmp.XXXXXX)
// are removed.
void write_file_atomically(const std::string &path, const std::string &bytes);

// Checks, before a long run, that write_file_atomically(path, ...) can work: the directory exists
// and accepts a new file, and path is not a directory. Throws AtomicFileError naming the problem.
void check_writable_destination(const std::string &path);

}  // namespace starcnn
