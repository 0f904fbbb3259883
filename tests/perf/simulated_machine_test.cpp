// The simulated machine's STARPU_HOME, from a 1-GPU calibration the test writes with figures of
// its own: every simulated GPU has GPU 0's links, the matrices say so cell by cell, the perf
// models are copied, the calibration is left as it was, and bad calibrations are named.
#include "perf/simulated_machine_support.h"

#include <gtest/gtest.h>
#include <starpu.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

namespace starcnn {
namespace {

namespace fs = std::filesystem;

constexpr double kToGpu = 51234.5, kFromGpu = 48765.25;  // MB/s
constexpr double kToGpuUs = 9.5, kFromGpuUs = 11.25;
constexpr unsigned long long kMemory = 150039150592ULL;

void write(const fs::path &path, const std::string &text) {
  fs::create_directories(path.parent_path());
  std::ofstream(path) << text;
}

std::string read(const fs::path &path) {
  std::ifstream in(path);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// A 1-GPU calibration as StarPU writes it on a real machine: 4 memory-node columns, nan beyond.
std::string matrix(double to_gpu, double from_gpu) {
  std::ostringstream m;
  m.precision(12);
  m << "# to 0\t\tto 1\t\tto 2\t\tto 3\t\t\n";
  m << "0.000000\t" << to_gpu << "\tnan\tnan\n";
  m << from_gpu << "\t0.000000\tnan\tnan\n";
  m << "nan\tnan\tnan\tnan\n";
  return m.str();
}

class SimulatedMachineTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char dir[] = "/tmp/starcnn-simtest.XXXXXX";
    ASSERT_NE(mkdtemp(dir), nullptr);
    root_ = dir;
    home_ = (root_ / "h200").string();
    const fs::path bus = root_ / "h200/.starpu/sampling/bus";
    write(bus / "gpu7.bandwidth", matrix(kToGpu, kFromGpu));
    write(bus / "gpu7.latency", matrix(kToGpuUs, kFromGpuUs));
    write(bus / "gpu7.platform.v4.xml",
          "<platform version=\"4\">\n <AS id=\"AS0\" routing=\"Full\">\n"
          "   <host id=\"CPU0\" speed=\"2000000000f\"/>\n"
          "   <host id=\"CUDA0\" speed=\"2000000000f\">\n     <prop id=\"memsize\" value=\"" +
              std::to_string(kMemory) + "\"/>\n   </host>\n </AS>\n</platform>\n");
    write(bus / "gpu7.config", "# Current configuration\n24 # Number of CPUs\n1 # CUDA\n");
    write(root_ / "h200/.starpu/sampling/codelets/45/conv2d_forward.gpu7", "entries\n");
  }
  void TearDown() override { fs::remove_all(root_); }

  // Every file under `dir` with its contents.
  static std::map<std::string, std::string> snapshot(const fs::path &dir) {
    std::map<std::string, std::string> files;
    for (const auto &entry : fs::recursive_directory_iterator(dir))
      if (entry.is_regular_file())
        files[fs::relative(entry.path(), dir).string()] = read(entry.path());
    return files;
  }

  fs::path root_;
  std::string home_;
};

std::vector<std::vector<std::string>> cells(const std::string &text) {
  std::vector<std::vector<std::string>> rows;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    std::vector<std::string> row;
    std::istringstream fields(line);
    std::string field;
    while (std::getline(fields, field, '\t')) row.push_back(field);
    rows.push_back(row);
  }
  return rows;
}

TEST_F(SimulatedMachineTest, FindsTheOneCalibratedHostAndGpuZerosLinks) {
  EXPECT_EQ(calibrated_host(home_), "gpu7");
  const CalibratedLinks links = read_calibrated_links(home_, "gpu7");
  EXPECT_DOUBLE_EQ(links.to_gpu_mbps, kToGpu);
  EXPECT_DOUBLE_EQ(links.from_gpu_mbps, kFromGpu);
  EXPECT_DOUBLE_EQ(links.to_gpu_us, kToGpuUs);
  EXPECT_DOUBLE_EQ(links.from_gpu_us, kFromGpuUs);
  EXPECT_EQ(links.gpu_memory_bytes, kMemory);
}

TEST_F(SimulatedMachineTest, EveryGpuGetsGpuZerosLinksInTheMatrices) {
  const std::string target = (root_ / "sim").string();
  const auto before = snapshot(home_);
  write_simulated_home(home_, "gpu7", SimulatedMachine{3, 8}, target);
  EXPECT_EQ(snapshot(home_), before) << "the calibration must only be read";
  const fs::path bus = root_ / "sim/.starpu/sampling/bus";
  EXPECT_EQ(read(root_ / "sim/.starpu/sampling/codelets/45/conv2d_forward.gpu7"), "entries\n");

  const double peer_bw = std::min(kToGpu, kFromGpu), peer_us = kToGpuUs + kFromGpuUs;
  for (const bool latency : {false, true}) {
    const auto m = cells(read(bus / (latency ? "gpu7.latency" : "gpu7.bandwidth")));
    ASSERT_EQ(m.size(), size_t(STARPU_MAXNODES));
    for (size_t from = 0; from < m.size(); ++from) {
      ASSERT_EQ(m[from].size(), size_t(STARPU_MAXNODES)) << "row " << from;
      for (size_t to = 0; to < m[from].size(); ++to) {
        double want = NAN;
        if (from < 4 && to < 4) {
          if (from == to)
            want = 0;
          else if (from == 0)
            want = latency ? kToGpuUs : kToGpu;
          else if (to == 0)
            want = latency ? kFromGpuUs : kFromGpu;
          else
            want = latency ? peer_us : peer_bw;
        }
        if (std::isnan(want))
          EXPECT_EQ(m[from][to], "nan") << from << "->" << to;
        else
          EXPECT_NEAR(std::strtod(m[from][to].c_str(), nullptr), want, 1e-6)
              << (latency ? "latency " : "bandwidth ") << from << "->" << to;
      }
    }
  }

  const std::string xml = read(bus / "gpu7.platform.v4.xml");
  for (int c = 0; c < 8; ++c)
    EXPECT_NE(xml.find("<host id=\"CPU" + std::to_string(c) + "\""), std::string::npos) << c;
  EXPECT_EQ(xml.find("<host id=\"CPU8\""), std::string::npos);
  EXPECT_EQ(xml.find("<host id=\"CUDA3\""), std::string::npos);
  for (int g = 0; g < 3; ++g) {
    const std::string gpu = "CUDA" + std::to_string(g);
    EXPECT_NE(xml.find("<host id=\"" + gpu +
                       "\" speed=\"2000000000f\">\n     <prop id=\"memsize\" "
                       "value=\"150039150592\"/>"),
              std::string::npos)
        << gpu;
    // 51234.5 MB/s is 51234500000 B/s; 9.5 us is 0.0000095 s.
    EXPECT_NE(xml.find("<link id=\"RAM-" + gpu +
                       "\" bandwidth=\"51234500000.000000Bps\" latency=\"0.000009500s\"/>"),
              std::string::npos)
        << xml;
    EXPECT_NE(xml.find("<route src=\"" + gpu + "\" dst=\"RAM\" symmetrical=\"NO\"><link_ctn id=\"" +
                       gpu + "-RAM\"/></route>"),
              std::string::npos);
  }
  // Peer copies go through RAM: no direct GPU-to-GPU route or peer copy.
  EXPECT_EQ(xml.find("CUDA2-CUDA0"), std::string::npos);
  EXPECT_EQ(xml.find("memcpy_peer"), std::string::npos);
}

TEST_F(SimulatedMachineTest, BadCalibrationsAreNamed) {
  auto error = [](auto f) -> std::string {
    try {
      f();
    } catch (const std::invalid_argument &e) {
      return e.what();
    }
    return "";
  };
  EXPECT_NE(error([&] { calibrated_host((root_ / "none").string()); }).find("is not a directory"),
            std::string::npos);
  EXPECT_NE(error([&] { calibrated_host(home_, "other"); }).find("no calibration of host 'other'"),
            std::string::npos);
  write(root_ / "h200/.starpu/sampling/bus/cpu1.bandwidth", "0.0\n");
  EXPECT_NE(error([&] { calibrated_host(home_); }).find("several hosts (cpu1, gpu7)"),
            std::string::npos);
  write(root_ / "h200/.starpu/sampling/bus/cpu1.latency", "0.0\n");
  const std::string no_gpu = error([&] { read_calibrated_links(home_, "cpu1"); });
  EXPECT_NE(no_gpu.find("cpu1.bandwidth: no figure from memory node 0 to 1"), std::string::npos)
      << no_gpu;
  fs::remove(root_ / "h200/.starpu/sampling/bus/gpu7.latency");
  EXPECT_NE(
      error([&] { read_calibrated_links(home_, "gpu7"); }).find("gpu7.latency: cannot be read"),
      std::string::npos);
}

}  // namespace
}  // namespace starcnn
