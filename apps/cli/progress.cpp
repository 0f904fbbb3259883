#include "apps/cli/progress.h"

#include <unistd.h>

#include <cmath>

namespace starcnn {

std::string format_duration(double seconds) {
  const long s = std::lround(std::max(0.0, seconds));
  char text[32];
  if (s >= 3600)
    std::snprintf(text, sizeof(text), "%ld:%02ld:%02ld", s / 3600, s / 60 % 60, s % 60);
  else
    std::snprintf(text, sizeof(text), "%ld:%02ld", s / 60, s % 60);
  return text;
}

ProgressPrinter::ProgressPrinter(size_t epochs, size_t batch)
    : epochs_(epochs), batch_(batch), terminal_(isatty(STDOUT_FILENO) == 1) {}

void ProgressPrinter::step(const Progress &p) {
  const double eta =
      p.images_per_s > 0 ? double((p.batches - p.batch) * batch_) / p.images_per_s : 0.0;
  if (terminal_) {
    const int width = 24;
    const int filled = int(double(width) * double(p.batch) / double(p.batches));
    std::printf("\repoch %zu/%zu [%s%s] %zu/%zu  loss %.4f  acc %5.1f%%  %.0f img/s  ETA %s ",
                p.epoch + 1, epochs_, std::string(size_t(filled), '#').c_str(),
                std::string(size_t(width - filled), '.').c_str(), p.batch, p.batches, p.loss,
                100.0 * p.accuracy, p.images_per_s, format_duration(eta).c_str());
    open_line_ = true;
  } else {
    std::printf("epoch %zu/%zu step %zu/%zu loss %.4f acc %.2f%% %.0f img/s eta %s\n", p.epoch + 1,
                epochs_, p.batch, p.batches, p.loss, 100.0 * p.accuracy, p.images_per_s,
                format_duration(eta).c_str());
  }
  std::fflush(stdout);
}

void ProgressPrinter::finish_line() {
  if (open_line_) std::printf("\n");
  open_line_ = false;
}

}  // namespace starcnn
