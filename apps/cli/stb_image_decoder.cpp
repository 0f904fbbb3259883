// stb_image from libstb-dev, compiled in a file of its own: only the formats infer reads through it
// (PNG, JPEG, BMP; netpbm files are read by image_file.cpp), from
// memory, with no side over 1 << 16 (image_file's size check comes first anyway). It is not our
// code to warn about, and the fuzz build leaves it out of UBSan (its benign undefined behaviour,
// such as memcpy from a null pointer of 0 bytes, would stop the fuzzer; AddressSanitizer still
// watches it). Inputs it mishandles are refused first by stb_input_check.
#define STB_IMAGE_IMPLEMENTATION
#define STBI_ONLY_PNG
#define STBI_ONLY_JPEG
#define STBI_ONLY_BMP
#define STBI_NO_STDIO
#define STBI_NO_LINEAR
#define STBI_MAX_DIMENSIONS (1 << 16)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wall"
#pragma GCC diagnostic ignored "-Wextra"
#pragma GCC diagnostic ignored "-Wconversion"
#pragma GCC diagnostic ignored "-Wshadow"
#pragma GCC diagnostic ignored "-Wsign-compare"
#pragma GCC diagnostic ignored "-Wunused-function"
#pragma GCC diagnostic ignored "-Wimplicit-fallthrough"
#include <stb/stb_image.h>
#pragma GCC diagnostic pop
