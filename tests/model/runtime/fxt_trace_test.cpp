// A short traced StarPU session (Runtime with a trace folder, a few ReLU tasks) converted by
// starpu_fxt_tool: the folder must then hold paje.trace and a tasks.rec naming the ReLU tasks.
#include "model/runtime/fxt_trace.h"
#include "codelets/relu.h"
#include "model/runtime/runtime.h"
#include "tests/support/registered_vector.h"
#include "tests/support/scratch_dir.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

namespace starcnn {
namespace {

// Name: fields of a recutils file, counted.
std::map<std::string, int> rec_names(const std::string &path) {
  std::map<std::string, int> names;
  std::ifstream in(path);
  for (std::string line; std::getline(in, line);)
    if (line.rfind("Name: ", 0) == 0) ++names[line.substr(6)];
  return names;
}

TEST(FxtTraceTest, TracedSessionConvertsToPajeAndTasksRec) {
  const std::string tool = find_fxt_tool();
  if (tool.empty()) GTEST_SKIP() << "starpu_fxt_tool not found";
  testing::ScratchDir dir;
  {
    Runtime runtime(RuntimeOptions{dir.path(), "", -1});
    testing::RegisteredVector x(std::vector<float>{-1.0f, 2.0f, -3.0f, 4.0f}), y(4, -7.0f),
        dx(4, -7.0f);
    for (int i = 0; i < 3; ++i) submit_relu_forward(x.handle(), y.handle(), Where::cpu);
    submit_relu_backward(y.handle(), x.handle(), dx.handle(), Where::cpu);
    starpu_task_wait_for_all();
  }
  setenv("STARPU_FXT_TRACE", "0", 1);  // later tests in this process record nothing

  EXPECT_NE(find_fxt_raw_trace(dir.path()).find("prof_file_"), std::string::npos);
  const std::vector<std::string> made = convert_fxt_trace(dir.path(), tool);
  for (const char *name : {"paje.trace", "tasks.rec", "trace.rec", "dag.dot"}) {
    EXPECT_NE(std::find(made.begin(), made.end(), name), made.end()) << name;
    EXPECT_TRUE(std::filesystem::is_regular_file(dir.file(name))) << name;
  }
  // StarPU 1.3 names a task after its codelet's perf model symbol (starcnn_<op>).
  const auto names = rec_names(dir.file("tasks.rec"));
  EXPECT_EQ(names.count("starcnn_relu_forward") ? names.at("starcnn_relu_forward") : 0, 3);
  EXPECT_EQ(names.count("starcnn_relu_backward") ? names.at("starcnn_relu_backward") : 0, 1);
}

TEST(FxtTraceTest, FolderWithoutRawTraceThrows) {
  testing::ScratchDir dir;
  EXPECT_THROW(find_fxt_raw_trace(dir.path()), std::runtime_error);
  EXPECT_THROW(convert_fxt_trace(dir.path(), "/bin/true"), std::runtime_error);
}

}  // namespace
}  // namespace starcnn
