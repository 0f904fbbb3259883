// safetensors files and the checkpoint metadata inside: any bytes decode to tensors whose values
// match their shapes (and encode back to a file that decodes the same) or give an error; as a
// checkpoint, to finite tensors with a parsed network and preprocessing, or an error.
#include "model/io/checkpoint.h"
#include "model/io/safetensors.h"
#include "tests/fuzz/fuzz_input_file.h"

#include <cmath>
#include <cstdlib>

using namespace starcnn;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  const std::string bytes(reinterpret_cast<const char *>(data), size);
  try {
    const TensorFile file = decode_safetensors(bytes, "input");
    for (const NamedTensor &t : file.tensors)
      if (element_count(t.shape) != t.values.size()) std::abort();
    const TensorFile back = decode_safetensors(encode_safetensors(file), "encoded");
    if (back.tensors.size() != file.tensors.size() || back.metadata != file.metadata) std::abort();
  } catch (const SafetensorsError &) {
  }
  try {
    const Checkpoint c = read_checkpoint(fuzz::input_file(data, size));
    if (!first_non_finite(c.parameters).empty() || !first_non_finite(c.momentum).empty())
      std::abort();
    const NetworkSpec spec = parse_network(c.network, "checkpoint network");
    check_checkpoint(c, spec, "input");
  } catch (const SafetensorsError &) {
  } catch (const NetworkSpecError &) {
  }
  return 0;
}
