// IDX images and labels files: any bytes give a result that agrees with its header or an error.
#include "model/data/idx_reader.h"
#include "model/io/regular_file.h"
#include "tests/fuzz/fuzz_input_file.h"

#include <cstdlib>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  const std::string path = starcnn::fuzz::input_file(data, size);
  try {
    const starcnn::IdxImages images = starcnn::read_idx_images(path);
    if (images.pixels.size() != images.count * 28 * 28 || size != 16 + images.pixels.size())
      std::abort();
  } catch (const starcnn::FileError &) {
  }
  try {
    const std::vector<uint8_t> labels = starcnn::read_idx_labels(path);
    if (size != 8 + labels.size()) std::abort();
  } catch (const starcnn::FileError &) {
  }
  return 0;
}
