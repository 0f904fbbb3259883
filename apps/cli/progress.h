// Training progress on the terminal: a one-line bar redrawn in place on a terminal, plain lines
// (one per report) when stdout is a file or a pipe.
#pragma once

#include "model/train/trainer.h"

#include <cstdio>
#include <string>

namespace starcnn {

class ProgressPrinter {
 public:
  ProgressPrinter(size_t epochs, size_t batch);
  void step(const Progress &progress);
  // Ends the bar's line before other output.
  void finish_line();

 private:
  size_t epochs_, batch_;
  bool terminal_;
  bool open_line_ = false;
};

std::string format_duration(double seconds);  // "1:05" or "1:02:03"

}  // namespace starcnn
