#include "attngen/attention.h"

#include <cmath>
#include <vector>

#include "cuda_device.h"
#include "dispatch.h"
#include "halide_call.h"
#include "kernel_call.h"
#include "modifiers.h"
#include "validate.h"

namespace attngen {

using detail::NamedView;

namespace {

// Validates the call, picks the kernel (the given one, or the dispatch's) and runs it.
Status run_attention(const AttentionArgs &args, const Kernel *given, CallInfo *info) {
    const NamedView q{"q", args.q, {"B", "H", "Nq", "d_k"}};
    const NamedView k{"k", args.k, {"B", "H_kv", "Nk", "d_k"}};
    const NamedView v{"v", args.v, {"B", "H_kv", "Nk", "d_v"}};
    const NamedView out{"out", args.out, {"B", "H", "Nq", "d_v"}};
    // q and out share a storage type (a variant's storage), and k and v one (its kv_storage,
    // q's or a 16-bit KV cache's); the kernels widen 16-bit types to float32, and lse and probs
    // are float32 whatever they are.
    const std::pair<const NamedView *, const NamedView *> typed_like[] = {
        {&q, &q}, {&k, &k}, {&v, &k}, {&out, &q}};
    for (const auto &[t, like] : typed_like) {
        ATTNGEN_RETURN_IF_ERROR(
            detail::check_view(*t, {DType::kFloat32, DType::kBFloat16, DType::kFloat16}));
        if (t->view.dtype != like->view.dtype) {
            return Status::InvalidArgument(
                std::string(t->name) + " has dtype " + dtype_name(t->view.dtype) + " but " +
                like->name + " has " + dtype_name(like->view.dtype) +
                (like == &q ? "; out has q's storage type" : "; k and v share one storage type"));
        }
    }
    const int64_t batch = args.q.shape[0], heads = args.q.shape[1], nq = args.q.shape[2],
                  d_k = args.q.shape[3];
    const int64_t kv_heads = args.k.shape[1], nk = args.k.shape[2], d_v = args.v.shape[3];

    ATTNGEN_RETURN_IF_ERROR(detail::check_extent(k, 0, batch, "the batch size B of q"));
    ATTNGEN_RETURN_IF_ERROR(detail::check_extent(k, 3, d_k, "d_k of q"));
    ATTNGEN_RETURN_IF_ERROR(detail::check_extent(v, 0, batch, "the batch size B of q"));
    ATTNGEN_RETURN_IF_ERROR(detail::check_extent(v, 1, kv_heads, "H_kv of k"));
    ATTNGEN_RETURN_IF_ERROR(detail::check_extent(v, 2, nk, "Nk of k"));
    if (heads % kv_heads != 0) {
        return Status::InvalidArgument("q has H = " + std::to_string(heads) +
                                       " heads, which is not a multiple of H_kv = " +
                                       std::to_string(kv_heads) + " key/value heads of k");
    }
    ATTNGEN_RETURN_IF_ERROR(detail::check_extent(out, 0, batch, "B of q"));
    ATTNGEN_RETURN_IF_ERROR(detail::check_extent(out, 1, heads, "H of q"));
    ATTNGEN_RETURN_IF_ERROR(detail::check_extent(out, 2, nq, "Nq of q"));
    ATTNGEN_RETURN_IF_ERROR(detail::check_extent(out, 3, d_v, "d_v of v"));

    std::vector<const NamedView *> outputs{&out};
    std::optional<NamedView> lse, probs;
    if (args.lse) {
        lse.emplace(NamedView{"lse", *args.lse, {"B", "H", "Nq"}});
        ATTNGEN_RETURN_IF_ERROR(detail::check_view(*lse, {DType::kFloat32}));
        ATTNGEN_RETURN_IF_ERROR(detail::check_extent(*lse, 0, batch, "B of q"));
        ATTNGEN_RETURN_IF_ERROR(detail::check_extent(*lse, 1, heads, "H of q"));
        ATTNGEN_RETURN_IF_ERROR(detail::check_extent(*lse, 2, nq, "Nq of q"));
        outputs.push_back(&*lse);
    }
    if (args.probs) {
        probs.emplace(NamedView{"probs", *args.probs, {"B", "H", "Nq", "Nk"}});
        ATTNGEN_RETURN_IF_ERROR(detail::check_view(*probs, {DType::kFloat32}));
        ATTNGEN_RETURN_IF_ERROR(detail::check_extent(*probs, 0, batch, "B of q"));
        ATTNGEN_RETURN_IF_ERROR(detail::check_extent(*probs, 1, heads, "H of q"));
        ATTNGEN_RETURN_IF_ERROR(detail::check_extent(*probs, 2, nq, "Nq of q"));
        ATTNGEN_RETURN_IF_ERROR(detail::check_extent(*probs, 3, nk, "Nk of k"));
        outputs.push_back(&*probs);
    }
    std::vector<int32_t> key_lengths(batch, static_cast<int32_t>(nk));
    std::optional<NamedView> lengths;
    if (args.key_lengths) {
        lengths.emplace(NamedView{"key_lengths", *args.key_lengths, {"B"}});
        ATTNGEN_RETURN_IF_ERROR(detail::read_key_lengths(*lengths, batch, nk, &key_lengths));
    }
    detail::CallModifiers modifiers;
    ATTNGEN_RETURN_IF_ERROR(modifiers.prepare(args.modifiers, args.causal, {batch, heads, nq, nk}));
    for (std::size_t a = 0; a < outputs.size(); a++) {
        ATTNGEN_RETURN_IF_ERROR(detail::check_output_layout(*outputs[a]));
        for (const NamedView *input : {&q, &k, &v}) {
            ATTNGEN_RETURN_IF_ERROR(detail::check_disjoint(*outputs[a], *input));
        }
        for (const NamedView &input : modifiers.inputs()) {
            ATTNGEN_RETURN_IF_ERROR(detail::check_disjoint(*outputs[a], input));
        }
        if (lengths) ATTNGEN_RETURN_IF_ERROR(detail::check_disjoint(*outputs[a], *lengths));
        for (std::size_t b = a + 1; b < outputs.size(); b++) {
            ATTNGEN_RETURN_IF_ERROR(detail::check_disjoint(*outputs[a], *outputs[b]));
        }
    }
    // Where the call runs: tensors in device memory need a CUDA kernel, and so does a placement
    // that asks for one; kCudaOrCpu falls back to the CPU kernels when no device is usable.
    bool device_tensors = false;
    for (const TensorView *t : {&args.q, &args.k, &args.v, &args.out}) {
        device_tensors |= t->device == Device::kCuda;
    }
    for (const auto *t : {&args.lse, &args.probs}) {
        device_tensors |= t->has_value() && (*t)->device == Device::kCuda;
    }
    if (args.key_lengths && args.key_lengths->device != Device::kCpu) {
        return Status::InvalidArgument(
            "key_lengths is in device memory; pass it in host memory (B integers)");
    }
    if (device_tensors && args.placement == Placement::kCpu) {
        return Status::InvalidArgument(
            "a tensor is in CUDA device memory but the placement is kCpu; use Placement::kCuda");
    }
    bool use_cuda = device_tensors || args.placement != Placement::kCpu;
    if (use_cuda) {
        Status device = detail::cuda_device_status();
        if (!device.ok()) {
            if (device_tensors || args.placement == Placement::kCuda) {
                return Status::Unavailable("the call needs a CUDA device: " + device.message());
            }
            use_cuda = false;
        }
    }
    float scale = args.scale ? *args.scale : 1.0f / std::sqrt(static_cast<float>(d_k));
    if (!std::isfinite(scale)) {
        return Status::InvalidArgument("scale is " + std::to_string(scale) +
                                       "; it must be a finite number");
    }

    detail::KernelRequest request;
    request.op = Op::kAttention;
    request.storage = args.q.dtype;
    request.kv_storage = args.k.dtype;
    request.mask = modifiers.mask();
    request.score = modifiers.score();
    request.probs = args.probs.has_value();
    request.heads = heads;
    request.kv_heads = kv_heads;
    request.d_k = d_k;
    request.d_v = d_v;
    request.queries = nq;
    request.keys = nk;
    request.cuda = use_cuda;
    const Kernel *kernel = given;
    if (kernel != nullptr) {
        ATTNGEN_RETURN_IF_ERROR(detail::check_given_kernel(*kernel, request));
    } else {
        ATTNGEN_RETURN_IF_ERROR(detail::find_kernel(request, args.schedule, &kernel));
    }
    if (info != nullptr) info->kernel = kernel->name;

    // The kernels always produce the log-sum-exp; it goes to scratch when not requested.
    std::vector<float> lse_scratch;
    TensorView lse_view;
    if (args.lse) {
        lse_view = *args.lse;
    } else {
        lse_scratch.resize(batch * heads * nq);
        lse_view = TensorView::f32(lse_scratch.data(), {batch, heads, nq});
    }
    TensorView lengths_view = TensorView::i32(key_lengths.data(), {batch});

    detail::HalideView hq(args.q), hk(args.k), hv(args.v), hout(args.out), hlse(lse_view),
        hlengths(lengths_view);
    std::optional<detail::HalideView> hprobs;
    if (args.probs) hprobs.emplace(*args.probs);
    detail::KernelCall call(*kernel);
    const std::pair<const char *, detail::HalideView *> buffers[] = {
        {"q", &hq},     {"k", &hk},    {"v", &hv}, {"key_lengths", &hlengths},
        {"out", &hout}, {"lse", &hlse}};
    for (const auto &[name, view] : buffers)
        ATTNGEN_RETURN_IF_ERROR(call.buffer(name, view->get()));
    if (hprobs) ATTNGEN_RETURN_IF_ERROR(call.buffer("probs", hprobs->get()));
    ATTNGEN_RETURN_IF_ERROR(call.scalar("scale", scale));
    ATTNGEN_RETURN_IF_ERROR(modifiers.bind(kernel->variant, &call));

    detail::CallContext context;
    std::vector<detail::HalideView *> inputs{&hq, &hk, &hv, &hlengths};
    modifiers.add_views(&inputs);
    std::vector<detail::HalideView *> results{&hout, &hlse};
    if (hprobs) results.push_back(&*hprobs);
    // Device copies and attachments are released even after a failure, so that nothing leaks.
    for (auto *views : {&inputs, &results}) {
        for (auto *view : *views) {
            Status attached = view->attach_device(&context);
            if (!attached.ok()) {
                (void)detail::release_devices(&context, results, inputs);
                return attached;
            }
        }
    }
    int result = 0;
    Status ran = call.run(&context, &result);
    Status moved = detail::release_devices(&context, results, inputs);
    ATTNGEN_RETURN_IF_ERROR(ran);
    Status status = context.finish(kernel->name.c_str(), result);
    return status.ok() ? moved : status;
}

}  // namespace

Status attention(const AttentionArgs &args, CallInfo *info) {
    return run_attention(args, nullptr, info);
}

Status attention(const AttentionArgs &args, const Kernel &kernel, CallInfo *info) {
    return run_attention(args, &kernel, info);
}

}  // namespace attngen
