#include "model/nn/layer_chain.h"

#include "codelets/conv2d/conv2d_prepare.h"
#include "codelets/conv2d/conv_block.h"
#include "codelets/conv2d/conv_math.h"
#include "codelets/conv2d/sample_groups.h"
#include "codelets/softmax_xent.h"
#include "codelets/support/scratch_vector.h"
#include "model/nn/layer_chain_program.h"

#include <algorithm>
#include <cstring>
#include <stdexcept>

namespace starcnn {

LayerChain::Program unpack_program(void *buffers[], void *cl_arg, ClaimTicket *ticket,
                                   ChainUpdateArgs *update) {
  LayerChain::Program p;
  if (ticket)
    starpu_codelet_unpack_args(cl_arg, &p, ticket);
  else if (update)
    starpu_codelet_unpack_args(cl_arg, &p, update);
  else
    starpu_codelet_unpack_args(cl_arg, &p);
  if (p.claims)  // the chain's own share, of any size, each sample input_floats / batch floats
    STARPU_ASSERT(vector_length(buffers[0]) * p.batch ==
                  p.input_floats * vector_length(buffers[1]));
  else
    STARPU_ASSERT(vector_length(buffers[0]) == p.input_floats &&
                  vector_length(buffers[1]) == p.batch);
  return p;
}

std::vector<LayerParams> layer_params(const LayerChain::Program &p, void *buffers[]) {
  std::vector<LayerParams> layers;
  void **b = buffers + kFirstParamBuffer;
  const float *packed = p.packed_weights ? vector_data(*b++) : nullptr;
  float *grads =
      p.packed_grads ? vector_data(b[per_layer_buffers(p) * p.layers_with_params]) : nullptr;
  for (uint32_t i = 0; i < p.ops; ++i) {
    const LayerChain::Op &op = p.op[i];
    if (op.kind != ChainOpKind::conv && op.kind != ChainOpKind::linear) continue;
    LayerParams l;  // in the buffers' order: w, dw, b, db, each unless packed
    l.w = packed ? packed + op.w_offset : vector_data(*b++);
    l.dw = grads ? grads + op.w_offset : vector_data(*b++);
    l.b = packed ? packed + op.b_offset : vector_data(*b++);
    l.db = grads ? grads + op.b_offset : vector_data(*b++);
    layers.push_back(l);
  }
  return layers;
}

std::vector<SgdVector> chain_update_vectors(const LayerChain::Program &p, void *buffers[],
                                            const std::vector<LayerParams> &layers,
                                            const ChainUpdateArgs &update, unsigned first) {
  STARPU_ASSERT(!p.packed_weights && layers.size() == p.layers_with_params);
  STARPU_ASSERT(update.momenta == 0 || update.momenta == 2 * p.layers_with_params);
  const unsigned per_layer = per_layer_buffers(p);  // w, (dw,) b(, db): b is half-way
  const float *extra = update.extra ? vector_data(buffers[first + update.momenta]) : nullptr;
  const float *grads =
      update.grads ? vector_data(buffers[first + update.momenta + update.extra]) : nullptr;
  std::vector<SgdVector> vectors;
  size_t layer = 0;
  for (uint32_t i = 0; i < p.ops; ++i) {
    const LayerChain::Op &op = p.op[i];
    if (op.kind != ChainOpKind::conv && op.kind != ChainOpKind::linear) continue;
    const LayerParams &l = layers[layer];
    void **own = buffers + kFirstParamBuffer + per_layer * layer;
    const auto momentum = [&](unsigned k) {
      return update.momenta ? vector_data(buffers[first + 2 * layer + k]) : nullptr;
    };
    vectors.push_back({const_cast<float *>(l.w), grads ? grads + op.w_offset : l.dw, momentum(0),
                       vector_length(own[0]), extra ? extra + op.w_offset : nullptr});
    vectors.push_back({const_cast<float *>(l.b), grads ? grads + op.b_offset : l.db, momentum(1),
                       vector_length(own[per_layer / 2]), extra ? extra + op.b_offset : nullptr});
    ++layer;
  }
  return vectors;
}

namespace {

// Two codelets, so that each side's perf model keeps the symbol its calibrations were made with.
starpu_perfmodel cpu_chain_model = history_model("starcnn_cpu_chain");
starpu_codelet cpu_chain_codelet =
    make_codelet("cpu_chain", layer_chain_cpu_task, nullptr, &cpu_chain_model, {});
// A claiming chain's model reads its program alone: the ticket, its second argument, changes at
// every step.
starpu_perfmodel cpu_chain_claims_model = shape_history_model("starcnn_cpu_chain_claims");
starpu_codelet cpu_chain_claims_codelet = make_codelet(
    "cpu_chain_claims", layer_chain_cpu_claims_task, nullptr, &cpu_chain_claims_model, {});
// Each math its own model: the simulation estimates a batch never run from the entries of other
// batches, and a TF32 chain's must not be taken from FP32 ones of the same data size.
starpu_perfmodel cuda_chain_model = history_model("starcnn_cuda_chain");
starpu_codelet cuda_chain_codelet = make_codelet(
    "cuda_chain", nullptr, STARCNN_CUDA_FUNC(layer_chain_cuda_task), &cuda_chain_model, {});
starpu_perfmodel cuda_chain_fp32_model = history_model("starcnn_cuda_chain_fp32");
starpu_codelet cuda_chain_fp32_codelet =
    make_codelet("cuda_chain_fp32", nullptr, STARCNN_CUDA_FUNC(layer_chain_cuda_task),
                 &cuda_chain_fp32_model, {});
// A CUDA chain's first launches set up cuDNN and cuBLAS and capture its graphs (one per batch
// slot, on its second use): 10-400x a replay on the H200 (call f's trace of lenet b64: 93.7, 1.2,
// 11.9, 1.4 ms, then 0.2-0.3). They go to a model of their own, so that the steady model, which
// dmda and the simulation read, holds the steps that repeat.
starpu_perfmodel cuda_chain_warmup_model = history_model("starcnn_cuda_chain_warmup");
starpu_codelet cuda_chain_warmup_codelet =
    make_codelet("cuda_chain_warmup", nullptr, STARCNN_CUDA_FUNC(layer_chain_cuda_task),
                 &cuda_chain_warmup_model, {});
constexpr unsigned kCudaChainWarmupLaunches = 4;  // two batch slots, each launched, then captured
// Chains that run the held update first (fold_update): models of their own, read from the
// program alone (the update's arguments change with the learning rate).
starpu_perfmodel cpu_chain_update_model = shape_history_model("starcnn_cpu_chain_update");
starpu_codelet cpu_chain_update_codelet = make_codelet(
    "cpu_chain_update", layer_chain_cpu_update_task, nullptr, &cpu_chain_update_model, {});
starpu_perfmodel cuda_chain_update_model = shape_history_model("starcnn_cuda_chain_update");
starpu_codelet cuda_chain_update_codelet =
    make_codelet("cuda_chain_update", nullptr, STARCNN_CUDA_FUNC(layer_chain_cuda_update_task),
                 &cuda_chain_update_model, {});

}  // namespace

std::optional<LayerChain> LayerChain::build(const NetworkSpec &spec, ParameterSet &params,
                                            int batch, int loss_batch, size_t grad_slot, Where side,
                                            CudaChain cuda, int claim_block) {
  Program p = Program();  // zeroed padding too: the perf model hashes the program's bytes
  const bool claims = claim_block > 0 && kind_of(side) == Where::cpu;
  const uint32_t n = uint32_t(claims ? claim_block : batch);  // every chain's block alike
  p.claims = claims ? 1 : 0;
  p.batch = n;
  p.loss_batch = uint32_t(loss_batch);
  p.classes = uint32_t(spec.output().size());
  p.input_floats = uint64_t(n) * uint64_t(spec.input.size());
  LayerChain chain;
  chain.side_ = side;
  chain.grad_slot_ = grad_slot;
  chain.cuda_ = kind_of(side) == Where::cuda;
  if (chain.cuda_ && cuda == CudaChain::off) return std::nullopt;
  p.graph = chain.cuda_ && cuda == CudaChain::graph;
  p.math = chain.cuda_ ? uint32_t(conv_math()) : 0;
  chain.fp32_ = chain.cuda_ && conv_math() == ConvMath::fp32;
  // The packed host weights are the CPU chains' (the CUDA side updates the parameters themselves).
  const Tensor *packed = chain.cuda_ ? nullptr : params.host_weights();
  p.packed_weights = packed != nullptr;
  chain.packed_weights_ = packed != nullptr;
  if (packed) chain.params_.push_back({packed->handle(), STARPU_R});
  std::vector<std::pair<Parameter *, Parameter *>> weights;  // per layer with parameters
  const auto add_params = [&](const std::string &layer, Op &op) {
    op.param = p.layers_with_params++;
    Parameter &w = params.get(layer + ".weight"), &b = params.get(layer + ".bias");
    op.w_offset = params.host_offset(w);  // in the packed vectors, where there are some
    op.b_offset = params.host_offset(b);
    weights.emplace_back(&w, &b);
  };
  for (size_t i = 0; i < spec.layers.size(); ++i) {
    const LayerSpec *layer = &spec.layers[i];
    if (layer->kind == LayerKind::flatten) continue;
    if (p.ops == uint32_t(kMaxChainOps)) return std::nullopt;
    Op &op = p.op[p.ops];
    const auto next_is = [&](LayerKind kind) {
      return i + 1 < spec.layers.size() && spec.layers[i + 1].kind == kind;
    };
    switch (layer->kind) {
      case LayerKind::conv:
        if (params.conv_plan(layer->name).parts.size() != 1) return std::nullopt;
        op.kind = ChainOpKind::conv;
        op.conv = conv_shape(*layer, n);
        p.col_floats = std::max<uint64_t>(p.col_floats, cpu_col_floats(op.conv));
        if (chain.cuda_) prepare_conv2d(op.conv);  // cuDNN's descriptors on every CUDA worker
        add_params(layer->name, op);
        // The ReLU after it, and a 2x2 maxpool after that, in the convolution's op (conv_block.h):
        // one pass over the output each way instead of two or three.
        if (next_is(LayerKind::relu)) {
          op.fusion = uint32_t(ConvFusion::relu);
          layer = &spec.layers[++i];
          op.z_offset = p.act_floats;
          p.act_floats += op.conv.y_count();
          if (next_is(LayerKind::maxpool) && spec.layers[i + 1].kernel == 2) {
            op.fusion = uint32_t(ConvFusion::relu_pool);
            layer = &spec.layers[++i];
            op.argmax_offset = p.argmax_ints;
            p.argmax_ints += conv_block_pool(op.conv).out_size();
          }
        }
        break;
      case LayerKind::relu:
        op.kind = ChainOpKind::relu;
        break;
      case LayerKind::maxpool:
        if (layer->kernel != 2) return std::nullopt;
        op.kind = ChainOpKind::maxpool;
        op.pool = {n, uint32_t(layer->in.c), uint32_t(layer->in.h), uint32_t(layer->in.w)};
        op.argmax_offset = p.argmax_ints;
        p.argmax_ints += op.pool.out_size();
        break;
      case LayerKind::linear:
        op.kind = ChainOpKind::linear;
        op.linear = {n, uint32_t(layer->in.size()), uint32_t(layer->out)};
        add_params(layer->name, op);
        break;
      case LayerKind::flatten:
        break;
    }
    op.out_size = uint64_t(n) * uint64_t(layer->out_shape.size());
    op.out_offset = p.act_floats;
    p.act_floats += op.out_size;
    ++p.ops;
  }
  if (p.ops == 0) return std::nullopt;
  // The gradients into one packed vector of the packed weights' layout where the set has one
  // for this chain (asked for only now that the chain is sure: the sum then takes that vector
  // instead of the slot's parameter gradients).
  const Tensor *grads = params.chain_grads(grad_slot, chain.cuda_);
  p.packed_grads = grads != nullptr;
  chain.packed_grads_ = grads != nullptr;
  if (claims && !grads) return std::nullopt;  // its blocks add into one packed vector
  chain.claims_ = claims;
  for (const auto &[w, b] : weights)  // the order layer_params reads
    for (Parameter *t : {w, b}) {
      chain.parameters_.push_back(t);
      if (!packed) chain.params_.push_back({t->value(0).handle(), STARPU_R});
      if (!grads) chain.params_.push_back({t->grad(0, grad_slot).handle(), STARPU_W});
    }
  if (grads) chain.params_.push_back({grads->handle(), STARPU_W});
  if (chain.cuda_) {
    chain.scratch_.push_back(
        std::make_shared<ScratchVector>(p.act_floats + kXentStatsSize, sizeof(float)));
    chain.scratch_.push_back(std::make_shared<ScratchVector>(p.act_floats, sizeof(float)));
    chain.scratch_.push_back(
        std::make_shared<ScratchVector>(std::max<uint64_t>(1, p.argmax_ints), sizeof(int32_t)));
  }
  chain.program_.resize(sizeof(Program));
  std::memcpy(chain.program_.data(), &p, sizeof(Program));
  return chain;
}

ChainUpdateArgs LayerChain::add_update_buffers(const ParameterSet::FoldedUpdate &update,
                                               std::vector<starpu_data_descr> &buffers) const {
  ChainUpdateArgs args{update.params, 0, update.extra_grads != nullptr, update.grads != nullptr};
  if (args.params.momentum != 0.0f) {
    for (Parameter *t : parameters_) buffers.push_back({t->momentum(0).handle(), STARPU_RW});
    args.momenta = uint32_t(parameters_.size());
  }
  if (update.extra_grads) buffers.push_back({update.extra_grads, STARPU_R});
  if (update.grads) buffers.push_back({update.grads, STARPU_R});
  return args;
}

bool LayerChain::fold_update(ParameterSet &params) {
  if (claims_ || packed_weights_ || grad_slot_ != 0 || parameters_.size() != params.all().size() ||
      !params.use_update_fold(side_))
    return false;
  fold_ = &params;
  return true;
}

void LayerChain::submit(const Tensor &images, const Tensor &labels, const Tensor &stats,
                        Where where, const Peers *peers) const {
  std::optional<ParameterSet::FoldedUpdate> update;
  if (fold_ && cuda_ && launches_ < kCudaChainWarmupLaunches)
    fold_->submit_held_update();
  else if (fold_)
    update = fold_->take_folded_update();
  std::vector<starpu_data_descr> buffers = {
      {images.handle(), STARPU_R}, {labels.handle(), STARPU_R}, {stats.handle(), STARPU_REDUX}};
  buffers.insert(buffers.end(), params_.begin(), params_.end());
  const size_t packed_grads = kFirstParamBuffer + params_.size() - 1;  // where the chain has them
  // A folding CUDA chain writes this step's vector of the pair (ParameterSet::use_update_fold).
  if (fold_ && cuda_ && packed_grads_)
    buffers[packed_grads].handle = fold_->device_grads_to_write();
  for (const auto &s : scratch_) buffers.push_back({s->handle(), STARPU_SCRATCH});
  if (update) {
    // The weights written, the gradients read before the pass writes them; packed, the update
    // reads the last step's vector of the pair instead.
    for (size_t i = kFirstParamBuffer; i < kFirstParamBuffer + params_.size(); ++i)
      buffers[i].mode = STARPU_RW;
    if (update->grads) {
      if (!packed_grads_ || update->grads == buffers[packed_grads].handle)
        throw std::logic_error("a folded update reads the packed gradients its chain writes");
      buffers[packed_grads].mode = STARPU_W;
    }
    const ChainUpdateArgs args = add_update_buffers(*update, buffers);
    if (cuda_) ++launches_;
    insert_task(cuda_ ? cuda_chain_update_codelet : cpu_chain_update_codelet,
                cuda_ ? "cuda_chain" : "cpu_chain", where, 0, STARPU_DATA_MODE_ARRAY,
                buffers.data(), int(buffers.size()), STARPU_VALUE, program_.data(), program_.size(),
                STARPU_VALUE, &args, sizeof(args));
    return;
  }
  if (claims_) {
    if (!peers || peers->images.size() != peers->labels.size() ||
        peers->images.size() + 1 != peers->ticket.chains)
      throw std::logic_error("a claiming chain's task needs its split's other chains");
    for (size_t c = 0; c < peers->images.size(); ++c) {
      buffers.push_back({peers->images[c]->handle(), STARPU_R});
      buffers.push_back({peers->labels[c]->handle(), STARPU_R});
    }
    insert_task(cpu_chain_claims_codelet, "cpu_chain", where, 0, STARPU_DATA_MODE_ARRAY,
                buffers.data(), int(buffers.size()), STARPU_VALUE, program_.data(), program_.size(),
                STARPU_VALUE, &peers->ticket, sizeof(ClaimTicket));
    return;
  }
  starpu_codelet &codelet = !cuda_                                   ? cpu_chain_codelet
                            : launches_++ < kCudaChainWarmupLaunches ? cuda_chain_warmup_codelet
                            : fp32_                                  ? cuda_chain_fp32_codelet
                                                                     : cuda_chain_codelet;
  insert_task(codelet, cuda_ ? "cuda_chain" : "cpu_chain", where, 0, STARPU_DATA_MODE_ARRAY,
              buffers.data(), int(buffers.size()), STARPU_VALUE, program_.data(), program_.size());
}

}  // namespace starcnn
