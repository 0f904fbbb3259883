// A guard in front of stb_image's JPEG decoder. Debian 12's stb_image builds each Huffman table
// into a 257-entry array without checking that the table's 16 code counts sum to at most 256, so
// a crafted DHT segment writes past it (found by fuzz_image). The JPEG standard allows 256 codes
// at most per table: a file claiming more is refused here before stb_image sees it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace starcnn {

// Empty when `bytes` is not a JPEG or every Huffman table in it is well formed; otherwise what is
// wrong, for an error message.
std::string jpeg_huffman_problem(const std::vector<uint8_t> &bytes);

}  // namespace starcnn
