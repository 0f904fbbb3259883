// CIFAR-10 batch files: any bytes give whole records with labels 0..9 or an error.
#include "model/data/cifar10_reader.h"
#include "model/io/regular_file.h"
#include "tests/fuzz/fuzz_input_file.h"

#include <cstdlib>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  const std::string path = starcnn::fuzz::input_file(data, size);
  try {
    const starcnn::Cifar10Images images = starcnn::read_cifar10_file(path);
    if (images.count * starcnn::kCifar10RecordSize != size ||
        images.labels.size() != images.count ||
        images.pixels.size() != images.count * (starcnn::kCifar10RecordSize - 1))
      std::abort();
    for (uint8_t label : images.labels)
      if (label > 9) std::abort();
  } catch (const starcnn::FileError &) {
  }
  return 0;
}
