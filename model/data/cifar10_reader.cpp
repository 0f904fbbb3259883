#include "model/data/cifar10_reader.h"

#include "model/io/regular_file.h"

#include <algorithm>
#include <string>

namespace starcnn {

Cifar10Images read_cifar10_file(const std::string &path) {
  // A CIFAR-10 batch file is 30,730,000 bytes; allow a few times more.
  const std::string bytes = read_regular_file(path, uint64_t(1) << 30, "a CIFAR-10 batch file");
  if (bytes.empty()) throw_file_error(path, "empty, expected CIFAR-10 records");
  if (bytes.size() % kCifar10RecordSize != 0)
    throw_file_error(path, "truncated: " + std::to_string(bytes.size()) +
                               " bytes is not a whole number of " +
                               std::to_string(kCifar10RecordSize) + "-byte CIFAR-10 records");
  Cifar10Images images;
  images.count = bytes.size() / kCifar10RecordSize;
  const size_t pixels_per_image = kCifar10RecordSize - 1;
  images.labels.resize(images.count);
  images.pixels.resize(images.count * pixels_per_image);
  for (size_t i = 0; i < images.count; ++i) {
    const auto *record = reinterpret_cast<const uint8_t *>(bytes.data()) + i * kCifar10RecordSize;
    if (record[0] > 9)
      throw_file_error(path, "corrupt: record " + std::to_string(i) + " has label " +
                                 std::to_string(record[0]) + ", outside 0..9");
    images.labels[i] = record[0];
    std::copy(record + 1, record + kCifar10RecordSize, images.pixels.data() + i * pixels_per_image);
  }
  return images;
}

Cifar10Images read_cifar10(const std::string &dir, Subset subset) {
  std::vector<std::string> files;
  if (subset == Subset::train) {
    for (int b = 1; b <= 5; ++b) files.push_back(dir + "/data_batch_" + std::to_string(b) + ".bin");
  } else {
    files.push_back(dir + "/test_batch.bin");
  }
  Cifar10Images all;
  for (const std::string &file : files) {
    Cifar10Images part = read_cifar10_file(file);
    all.count += part.count;
    all.labels.insert(all.labels.end(), part.labels.begin(), part.labels.end());
    all.pixels.insert(all.pixels.end(), part.pixels.begin(), part.pixels.end());
  }
  return all;
}

}  // namespace starcnn
