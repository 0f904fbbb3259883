// Guards in front of Debian 12's stb_image, for inputs it mishandles (both found by fuzz_image):
// - a JPEG Huffman table (DHT) whose 16 code counts sum past 256: stb_image builds it into a
//   257-entry array without checking, writing past it (the standard allows 256 codes at most);
// - a PNG chunk whose length claims more bytes than the file holds: stb_image grows its IDAT
//   buffer to the claimed size (up to 2 GiB) before reading.
// Such files are refused here before stb_image sees them.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace starcnn {

// Empty when `bytes` passes the checks above (or is neither a JPEG nor a PNG); otherwise what is
// wrong, for an error message ("corrupt JPEG: ...", "corrupt PNG: ...").
std::string stb_input_problem(const std::vector<uint8_t> &bytes);

}  // namespace starcnn
