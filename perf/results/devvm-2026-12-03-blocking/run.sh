#!/bin/bash
# fast against blocking-driver StarPU, same binary, alternating, on this machine.
cd /work/main
export STARPU_HOME=/tmp/devh
B=/usr/local/lib/starcnn/starpu-1.3.10-df051f229472-cudayes-blocking/lib
out=$1
: > $out
for rep in 1 2 3; do
  for lib in fast blocking; do
    if [ $lib = blocking ]; then export LD_LIBRARY_PATH=$B; else unset LD_LIBRARY_PATH; fi
    for n in 1 2; do
      STARPU_NCPU=$n build/perf/train_benchmark --configs cpu-only --networks lenet --batches 64 --micro-batches 1 --max-seconds 3 2>/dev/null | sed "s/^{/{\"starpu_build\": \"$lib\", \"rep\": $rep, \"case\": \"NCPU=$n, 1 micro-batch\", /" >> $out
    done
    build/perf/train_benchmark --configs cpu-only --networks lenet --batches 64,256 --max-seconds 3 2>/dev/null | sed "s/^{/{\"starpu_build\": \"$lib\", \"rep\": $rep, \"case\": \"NCPU=2, default micro-batches\", /" >> $out
  done
done
unset LD_LIBRARY_PATH
