#include "perf/simulated_machine_support.h"

#include "model/io/atomic_file.h"

#include <starpu.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <stdexcept>
#include <vector>

namespace starcnn {
namespace {

namespace fs = std::filesystem;

fs::path bus_dir(const std::string &home) {
  return fs::path(home) / ".starpu" / "sampling" / "bus";
}

std::string read_text(const fs::path &path) {
  std::ifstream in(path);
  if (!in) throw std::invalid_argument(path.string() + ": cannot be read");
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// The rows of a StarPU bus matrix file (comment lines skipped), each row's values in order.
std::vector<std::vector<double>> read_matrix(const fs::path &path) {
  std::istringstream in(read_text(path));
  std::vector<std::vector<double>> rows;
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream fields(line);
    std::vector<double> row;
    std::string field;
    while (fields >> field) row.push_back(std::strtod(field.c_str(), nullptr));
    rows.push_back(row);
  }
  return rows;
}

// Matrix entry [from][to], which must be a measured, positive figure.
double link_value(const std::vector<std::vector<double>> &m, size_t from, size_t to,
                  const fs::path &path) {
  if (from >= m.size() || to >= m[from].size() || !std::isfinite(m[from][to]) || m[from][to] <= 0)
    throw std::invalid_argument(path.string() + ": no figure from memory node " +
                                std::to_string(from) + " to " + std::to_string(to) +
                                " (0 is RAM, 1 CUDA device 0): was it calibrated on a machine "
                                "with a GPU that StarPU used?");
  return m[from][to];
}

std::string number(double value, int decimals = 6) {
  std::ostringstream out;
  out.precision(decimals);
  out << std::fixed << value;
  return out.str();
}

void add_link(std::ostringstream &xml, const std::string &id, double mbps, double us) {
  xml << "   <link id=\"" << id << "\" bandwidth=\"" << number(mbps * 1e6) << "Bps\" latency=\""
      << number(us * 1e-6, 9) << "s\"/>\n";
}

void add_route(std::ostringstream &xml, const std::string &from, const std::string &to) {
  xml << "   <route src=\"" << from << "\" dst=\"" << to << "\" symmetrical=\"NO\"><link_ctn id=\""
      << from << "-" << to << "\"/></route>\n";
}

// A GPU-to-GPU copy, staged through host memory (see SimulatedMachine).
double peer_mbps(const CalibratedLinks &l) {
  return std::min(l.to_gpu_mbps, l.from_gpu_mbps);
}
double peer_us(const CalibratedLinks &l) {
  return l.to_gpu_us + l.from_gpu_us;
}

}  // namespace

std::string calibrated_host(const std::string &home, const std::string &host) {
  const fs::path dir = bus_dir(home);
  if (!fs::is_directory(dir))
    throw std::invalid_argument(dir.string() +
                                " is not a directory: --models must be a STARPU_HOME calibrated "
                                "on a real machine (DIR/.starpu/sampling/{bus,codelets})");
  std::vector<std::string> hosts;
  for (const fs::directory_entry &entry : fs::directory_iterator(dir))
    if (entry.path().extension() == ".bandwidth") hosts.push_back(entry.path().stem().string());
  std::sort(hosts.begin(), hosts.end());
  if (!host.empty()) {
    if (std::find(hosts.begin(), hosts.end(), host) == hosts.end())
      throw std::invalid_argument(dir.string() + " holds no calibration of host '" + host + "'");
    return host;
  }
  if (hosts.size() == 1) return hosts[0];
  std::string names;
  for (const std::string &h : hosts) names += (names.empty() ? "" : ", ") + h;
  if (hosts.empty())
    throw std::invalid_argument(dir.string() + " holds no HOST.bandwidth: no bus calibration");
  throw std::invalid_argument(dir.string() + " holds calibrations of several hosts (" + names +
                              "): choose one with --host");
}

CalibratedLinks read_calibrated_links(const std::string &home, const std::string &host) {
  const fs::path dir = bus_dir(home);
  const fs::path bandwidth = dir / (host + ".bandwidth"), latency = dir / (host + ".latency");
  const auto bw = read_matrix(bandwidth), lat = read_matrix(latency);
  CalibratedLinks links;
  links.to_gpu_mbps = link_value(bw, 0, 1, bandwidth);
  links.from_gpu_mbps = link_value(bw, 1, 0, bandwidth);
  links.to_gpu_us = link_value(lat, 0, 1, latency);
  links.from_gpu_us = link_value(lat, 1, 0, latency);
  const fs::path platform = dir / (host + ".platform.v4.xml");
  const std::string xml = read_text(platform);
  const std::regex cuda0_memory(
      "<host id=\"CUDA0\"[^>]*>\\s*<prop id=\"memsize\" value=\"([0-9]+)\"");
  std::smatch match;
  if (!std::regex_search(xml, match, cuda0_memory))
    throw std::invalid_argument(platform.string() + ": no host CUDA0 with a memsize");
  links.gpu_memory_bytes = std::stoull(match[1].str());
  return links;
}

std::string platform_xml(const CalibratedLinks &links, const SimulatedMachine &machine) {
  std::ostringstream xml;
  xml << "<?xml version='1.0'?>\n"
         "<!DOCTYPE platform SYSTEM \"https://simgrid.org/simgrid.dtd\">\n"
         "<!-- Written by starcnn's simulate: "
      << machine.gpus << " GPUs with GPU 0's links of the calibrated machine, " << machine.cpus
      << " CPU cores. -->\n"
         "<platform version=\"4.1\">\n"
         " <config id=\"General\">\n"
         "   <prop id=\"network/TCP-gamma\" value=\"-1\"></prop>\n"
         "   <prop id=\"network/latency-factor\" value=\"1\"></prop>\n"
         "   <prop id=\"network/bandwidth-factor\" value=\"1\"></prop>\n"
         "   <prop id=\"network/crosstraffic\" value=\"0\"></prop>\n"
         "   <prop id=\"network/weight-S\" value=\"0.0\"></prop>\n"
         " </config>\n"
         " <zone id=\"AS0\" routing=\"Full\">\n"
         "   <host id=\"MAIN\" speed=\"1f\"/>\n";
  for (int c = 0; c < machine.cpus; ++c)
    xml << "   <host id=\"CPU" << c << "\" speed=\"2000000000f\"/>\n";
  for (int g = 0; g < machine.gpus; ++g)
    xml << "   <host id=\"CUDA" << g << "\" speed=\"2000000000f\">\n"
        << "     <prop id=\"memsize\" value=\"" << links.gpu_memory_bytes << "\"/>\n"
        << "   </host>\n";
  xml << "   <host id=\"RAM\" speed=\"1f\"/>\n";
  for (int g = 0; g < machine.gpus; ++g) {
    const std::string gpu = "CUDA" + std::to_string(g);
    add_link(xml, "RAM-" + gpu, links.to_gpu_mbps, links.to_gpu_us);
    add_link(xml, gpu + "-RAM", links.from_gpu_mbps, links.from_gpu_us);
  }
  for (int g = 0; g < machine.gpus; ++g) {
    const std::string gpu = "CUDA" + std::to_string(g);
    add_route(xml, "RAM", gpu);
    add_route(xml, gpu, "RAM");
  }
  xml << " </zone>\n</platform>\n";
  return xml.str();
}

std::string bus_matrix(const CalibratedLinks &links, const SimulatedMachine &machine, bool latency,
                       int max_nodes) {
  std::ostringstream out;
  out << "# ";
  for (int to = 0; to < max_nodes; ++to) out << "to " << to << "\t\t";
  out << "\n";
  const int nodes = 1 + machine.gpus;
  for (int from = 0; from < max_nodes; ++from) {
    for (int to = 0; to < max_nodes; ++to) {
      double value = NAN;
      if (from < nodes && to < nodes) {
        if (from == to)
          value = 0;
        else if (from == 0)
          value = latency ? links.to_gpu_us : links.to_gpu_mbps;
        else if (to == 0)
          value = latency ? links.from_gpu_us : links.from_gpu_mbps;
        else
          value = latency ? peer_us(links) : peer_mbps(links);
      }
      out << (to ? "\t" : "") << (std::isnan(value) ? "nan" : number(value));
    }
    out << "\n";
  }
  return out.str();
}

void write_simulated_home(const std::string &home, const std::string &host,
                          const SimulatedMachine &machine, const std::string &target) {
  // A machine without GPUs needs no GPU links (the calibration may come from one without any).
  const CalibratedLinks links =
      machine.gpus > 0 ? read_calibrated_links(home, host) : CalibratedLinks{};
  const fs::path codelets = fs::path(home) / ".starpu" / "sampling" / "codelets";
  if (!fs::is_directory(codelets))
    throw std::invalid_argument(codelets.string() + " is not a directory: no perf models");
  const fs::path sampling = fs::path(target) / ".starpu" / "sampling";
  fs::create_directories(sampling / "bus");
  fs::copy(codelets, sampling / "codelets", fs::copy_options::recursive);
  const fs::path bus = sampling / "bus";
  write_file_atomically((bus / (host + ".platform.v4.xml")).string(), platform_xml(links, machine));
  write_file_atomically((bus / (host + ".bandwidth")).string(),
                        bus_matrix(links, machine, false, STARPU_MAXNODES));
  write_file_atomically((bus / (host + ".latency")).string(),
                        bus_matrix(links, machine, true, STARPU_MAXNODES));
  write_file_atomically((bus / (host + ".config")).string(),
                        "# Current configuration\n" + std::to_string(machine.cpus) +
                            " # Number of CPUs\n" + std::to_string(machine.gpus) +
                            " # Number of CUDA devices\n0 # Number of OpenCL devices\n"
                            "0 # Number of MIC devices\n");
}

}  // namespace starcnn
