// The image decoders infer uses (stb_image's PNG, JPEG, BMP and PPM; starcnn's PGM): any bytes
// give an image of exactly the asked size and channels, or an ImageError; never a crash, a read
// out of bounds or an allocation past what the header check allows.
#include "apps/cli/image_file.h"

#include <cstdlib>

using namespace starcnn;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  const std::vector<uint8_t> bytes(data, data + size);
  for (const ImageShape want : {ImageShape{28, 28, 1}, ImageShape{4, 3, 3}}) {
    try {
      const Image image = decode_image(bytes, "fuzz", want);
      if (image.width != want.width || image.height != want.height ||
          image.channels != want.channels ||
          image.pixels.size() != want.width * want.height * want.channels)
        std::abort();
    } catch (const ImageError &) {
    }
  }
  return 0;
}
