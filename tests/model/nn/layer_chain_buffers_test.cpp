// A LayerChain task's parameter buffers in each of its four layouts (the weights per layer or
// packed, the gradients per layer or packed): layer_params finds every layer's w, dw, b and db
// where build puts them, and first_scratch_buffer is the buffer after the last of them. The CUDA
// side's layout (weights per layer, gradients packed) runs only on a GPU; its buffers are read by
// the same code, checked here on host memory; so are a folding chain's update vectors
// (chain_update_vectors), whose CUDA layout only a GPU runs.
#include "model/nn/layer_chain_program.h"

#include <gtest/gtest.h>
#include <starpu.h>

#include <cstring>
#include <string>
#include <vector>

namespace starcnn {
namespace {

// Stand-ins for the task's vector interfaces: each buffer's pointer only.
struct FakeBuffers {
  std::vector<starpu_vector_interface> interfaces;
  std::vector<void *> pointers;

  void add(void *data, uint32_t elements) {
    starpu_vector_interface v;
    std::memset(&v, 0, sizeof v);
    v.id = STARPU_VECTOR_INTERFACE_ID;
    v.ptr = uintptr_t(data);
    v.nx = elements;
    v.elemsize = sizeof(float);
    interfaces.push_back(v);
  }
  void **finish() {
    for (starpu_vector_interface &v : interfaces) pointers.push_back(&v);
    return pointers.data();
  }
};

// Two layers with parameters (a convolution and a linear layer) between parameterless ops;
// packed offsets as ParameterSet::host_offset gives them (w0, b0, w1, b1).
const size_t w0 = 0, b0 = 12, w1 = 15, b1 = 35, total = 37;

LayerChain::Program two_layer_program() {
  LayerChain::Program p = LayerChain::Program();
  p.ops = 4;
  p.layers_with_params = 2;
  p.op[0].kind = ChainOpKind::conv;
  p.op[1].kind = ChainOpKind::relu;
  p.op[2].kind = ChainOpKind::linear;
  p.op[3].kind = ChainOpKind::maxpool;
  p.op[0].w_offset = w0;
  p.op[0].b_offset = b0;
  p.op[2].w_offset = w1;
  p.op[2].b_offset = b1;
  return p;
}

TEST(LayerChainBuffers, EveryLayoutFindsEachLayersParameters) {
  LayerChain::Program p = two_layer_program();

  for (uint32_t packed_weights : {0u, 1u})
    for (uint32_t packed_grads : {0u, 1u}) {
      SCOPED_TRACE("packed weights " + std::to_string(packed_weights) + ", packed gradients " +
                   std::to_string(packed_grads));
      p.packed_weights = packed_weights;
      p.packed_grads = packed_grads;
      std::vector<float> weights(total), grads(total), head(3), scratch(1);
      std::vector<std::vector<float>> own(8, std::vector<float>(1));  // per layer w, dw, b, db
      FakeBuffers buffers;
      for (float &x : head) buffers.add(&x, 1);  // images, labels, stats
      if (packed_weights) buffers.add(weights.data(), uint32_t(total));
      for (int layer = 0; layer < 2; ++layer)  // as build pushes them
        for (int k = 0; k < 4; ++k) {
          const bool is_weight = k % 2 == 0;
          if (is_weight ? !packed_weights : !packed_grads)
            buffers.add(own[layer * 4 + k].data(), 1);
        }
      if (packed_grads) buffers.add(grads.data(), uint32_t(total));
      buffers.add(scratch.data(), 1);
      void **b = buffers.finish();

      EXPECT_EQ(first_scratch_buffer(p), unsigned(buffers.interfaces.size() - 1));
      const std::vector<LayerParams> layers = layer_params(p, b);
      ASSERT_EQ(layers.size(), 2u);
      const size_t w_at[] = {w0, w1}, b_at[] = {b0, b1};
      for (int layer = 0; layer < 2; ++layer) {
        const LayerParams &l = layers[size_t(layer)];
        EXPECT_EQ(l.w, packed_weights ? weights.data() + w_at[layer] : own[layer * 4].data());
        EXPECT_EQ(l.dw, packed_grads ? grads.data() + w_at[layer] : own[layer * 4 + 1].data());
        EXPECT_EQ(l.b, packed_weights ? weights.data() + b_at[layer] : own[layer * 4 + 2].data());
        EXPECT_EQ(l.db, packed_grads ? grads.data() + b_at[layer] : own[layer * 4 + 3].data());
      }
    }
}

// A folding chain's update (chain_update_vectors) in the layouts it runs in: the weights per layer
// and the gradients per layer (one CPU task) or packed (the CUDA chain beside the host mirror),
// after a CUDA chain's three scratch buffers the momenta, the host's packed gradient sum and, with
// packed gradients, the last step's (the update reads those, the pass writes the others). Each
// vector's w, gradient, momentum, length and added gradients are where build and submit put them.
TEST(LayerChainBuffers, FoldedUpdateFindsEachVectorsBuffers) {
  LayerChain::Program p = two_layer_program();
  const size_t sizes[] = {b0 - w0, w1 - b0, b1 - w1, total - b1};
  const size_t offsets[] = {w0, b0, w1, b1};  // w0, b0, w1, b1 in the packed layout
  for (uint32_t packed_grads : {0u, 1u}) {
    SCOPED_TRACE("packed gradients " + std::to_string(packed_grads));
    p.packed_grads = packed_grads;
    std::vector<float> grads(total), extra(total), last(total), head(3), scratch(3);
    std::vector<std::vector<float>> own, momenta;  // w0, b0, w1, b1 (and their gradients)
    for (size_t v = 0; v < 4; ++v) {
      own.emplace_back(sizes[v]);
      own.emplace_back(sizes[v]);
      momenta.emplace_back(sizes[v]);
    }
    FakeBuffers buffers;
    for (float &x : head) buffers.add(&x, 1);
    for (size_t v = 0; v < 4; ++v) {  // w, dw, b, db per layer as build pushes them
      buffers.add(own[2 * v].data(), uint32_t(sizes[v]));
      if (!packed_grads) buffers.add(own[2 * v + 1].data(), uint32_t(sizes[v]));
    }
    if (packed_grads) buffers.add(grads.data(), uint32_t(total));
    for (float &x : scratch) buffers.add(&x, 1);
    const unsigned first = unsigned(buffers.interfaces.size());
    for (auto &m : momenta) buffers.add(m.data(), uint32_t(m.size()));
    buffers.add(extra.data(), uint32_t(total));
    if (packed_grads) buffers.add(last.data(), uint32_t(total));
    void **b = buffers.finish();

    ASSERT_EQ(first, first_scratch_buffer(p) + 3);
    const std::vector<LayerParams> layers = layer_params(p, b);
    ChainUpdateArgs update{{0.1f, 0.9f, 0.0f, 0}, 4, 1, packed_grads};
    const std::vector<SgdVector> vectors = chain_update_vectors(p, b, layers, update, first);
    ASSERT_EQ(vectors.size(), 4u);
    for (size_t v = 0; v < 4; ++v) {
      SCOPED_TRACE("vector " + std::to_string(v));
      EXPECT_EQ(vectors[v].w, own[2 * v].data());
      EXPECT_EQ(vectors[v].grad, packed_grads ? last.data() + offsets[v] : own[2 * v + 1].data());
      EXPECT_EQ(vectors[v].momentum_buf, momenta[v].data());
      EXPECT_EQ(vectors[v].n, sizes[v]);
      EXPECT_EQ(vectors[v].extra_grad, extra.data() + offsets[v]);
      EXPECT_EQ(vectors[v].w_copy, nullptr);
    }
    // Neither momentum nor added gradients, and the gradients the pass writes: no buffer read
    // past the scratch.
    update = {{0.1f, 0.0f, 0.0f, 0}, 0, 0, 0};
    const std::vector<SgdVector> plain = chain_update_vectors(p, b, layers, update, first);
    for (size_t v = 0; v < 4; ++v) {
      EXPECT_EQ(plain[v].momentum_buf, nullptr);
      EXPECT_EQ(plain[v].extra_grad, nullptr);
      EXPECT_EQ(plain[v].grad, packed_grads ? grads.data() + offsets[v] : own[2 * v + 1].data());
    }
  }
}

}  // namespace
}  // namespace starcnn
