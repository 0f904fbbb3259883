// The network descriptions shipped in model/networks/*.net, compiled in at build time (the .net
// files are their only source).
#pragma once

#include <string>
#include <vector>

namespace starcnn {

// "lenet", "wide", ...: the file names without .net.
std::vector<std::string> builtin_network_names();
// The description's text, or nullptr when there is no built-in network of that name.
const char *builtin_network_text(const std::string &name);

}  // namespace starcnn
