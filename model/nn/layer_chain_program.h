// The packed description of a LayerChain (the task's argument) and what its CPU and CUDA task
// functions share: the buffer layout and the walk over the layers with parameters.
#pragma once

#include "codelets/conv2d/conv2d_shape.h"
#include "codelets/linear.h"
#include "codelets/maxpool.h"
#include "codelets/sgd.h"
#include "model/nn/conv_layer.h"
#include "model/nn/layer_chain.h"

#include <cstddef>
#include <cstdint>
#include <vector>

namespace starcnn {

enum class ChainOpKind : uint32_t { conv, relu, maxpool, linear };

// One layer (flatten needs none: [N, C, H, W] and [N, C*H*W] are the same floats). Its output and
// the gradient of its output sit at out_offset in the task's activation and gradient buffers.
struct LayerChain::Op {
  ChainOpKind kind = ChainOpKind::relu;
  uint32_t param = 0;  // conv, linear: which layer with parameters (LayerParams)
  // conv: the ReLU (and pool) after it in the op (a ConvFusion). A fused op's z_offset holds the
  // gradient of the convolution's output in the gradient buffer and, with a pool, the convolution's
  // output (before the pool) in the activations; with a ReLU alone its output is relu'd in place.
  uint32_t fusion = 0;
  uint64_t z_offset = 0;
  uint64_t w_offset = 0, b_offset = 0;  // in the packed weights, where the program has them
  Conv2dShape conv;
  MaxpoolShape pool{};
  LinearShape linear{};
  uint64_t out_size = 0, out_offset = 0, argmax_offset = 0;
};

struct LayerChain::Program {
  uint32_t ops = 0, batch = 0, loss_batch = 0, classes = 0;
  uint32_t packed_weights = 0;  // 1: w and b from one packed vector (ParameterSet::host_weights)
  uint32_t packed_grads = 0;    // 1: dw and db into one packed vector (ParameterSet::chain_grads)
  uint32_t layers_with_params = 0;
  uint32_t graph = 0;  // CUDA: replay the kernels as a CUDA graph (CudaGraphCache)
  // CUDA: the convolution math it was built under (a ConvMath), so that the perf model, which
  // hashes the program, keeps FP32 and TF32 chains apart.
  uint32_t math = 0;
  // CPU: 1 when the chain claims blocks of `batch` samples from its split's chains (ChainClaims),
  // its own images and labels holding a chain's whole share. It fills the padding before
  // input_floats, so that the programs without it keep their bytes, and their perf models.
  uint32_t claims = 0;
  uint64_t input_floats = 0, act_floats = 0, argmax_ints = 0, col_floats = 1;
  Op op[kMaxChainOps];
};
static_assert(offsetof(LayerChain::Program, claims) + sizeof(uint32_t) ==
                  offsetof(LayerChain::Program, input_floats),
              "Program::claims must stay in the padding before input_floats");

// Buffers: images, labels, stats; the packed weights where the program has them (CPU only);
// per layer with parameters w, dw, b, db, leaving out the weights where they come packed and the
// gradients where they go packed; the packed gradients where the program has them. A CUDA
// chain's then end with its scratch: activations (act_floats + kXentStatsSize), their gradients
// (act_floats) and the pools' argmax (argmax_ints, at least 1). A claiming CPU chain's end with the
// other chains' images and labels, in the chains' order (ClaimTicket::own left out).
constexpr unsigned kFirstParamBuffer = 3;

struct LayerParams {
  const float *w, *b;
  float *dw, *db;
};

// A chain's task that runs the parameter set's held update first (LayerChain::fold_update): its
// second argument. Its buffers after the chain's own (a CUDA chain's scratch included): one
// momentum buffer per parameter (w then b of each layer with parameters, in order) where
// `momenta`, the added gradients (packed) where `extra`, then the last step's packed gradients
// where `grads` (else the update reads the gradients the pass then writes). Its weights (and
// gradients, where the update reads them) are RW.
struct ChainUpdateArgs {
  SgdParams params;
  uint32_t momenta = 0, extra = 0, grads = 0;
};

// The task's program (and a claiming chain's ticket, or a folding chain's update, its second
// argument), its images and labels checked against it.
LayerChain::Program unpack_program(void *buffers[], void *cl_arg, ClaimTicket *ticket = nullptr,
                                   ChainUpdateArgs *update = nullptr);

// The vectors of a folding chain's update: each layer's w and b (which must be its own buffers,
// not packed) with their gradients (where the pass writes them, `layers`, or packed after the
// added ones), their momentum buffers and the added gradients from buffer `first` on.
std::vector<SgdVector> chain_update_vectors(const LayerChain::Program &p, void *buffers[],
                                            const std::vector<LayerParams> &layers,
                                            const ChainUpdateArgs &update, unsigned first);

// The parameters of the program's layers, in order, from the task's buffers.
std::vector<LayerParams> layer_params(const LayerChain::Program &p, void *buffers[]);

// A layer's own buffers: w and b unless the weights come packed, dw and db unless the gradients
// go packed.
inline unsigned per_layer_buffers(const LayerChain::Program &p) {
  return (p.packed_weights ? 0 : 2) + (p.packed_grads ? 0 : 2);
}

// The buffer after the parameters' (a CUDA chain's first scratch).
inline unsigned first_scratch_buffer(const LayerChain::Program &p) {
  return kFirstParamBuffer + p.packed_weights + per_layer_buffers(p) * p.layers_with_params +
         p.packed_grads;
}

void layer_chain_cpu_task(void *buffers[], void *cl_arg);
void layer_chain_cpu_claims_task(void *buffers[], void *cl_arg);
void layer_chain_cpu_update_task(void *buffers[], void *cl_arg);
#ifdef STARCNN_USE_CUDA
void layer_chain_cuda_task(void *buffers[], void *cl_arg);
void layer_chain_cuda_update_task(void *buffers[], void *cl_arg);
#endif

}  // namespace starcnn
