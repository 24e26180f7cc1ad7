# attngen_add_kernel(): compiles one kernel variant with attngen's generators at build time. The
# same function builds attngen's own kernels (kernels/variants.txt) and those of projects that use
# the installed package (find_package(attngen)).
#
#   attngen_add_kernel([NAME <name>] OP attention|mha|projection|scores|softmax|weighted_sum
#                      [STORAGE f32|bf16|f16] [KV_STORAGE f32|bf16|f16]
#                      [MASK none|<kinds>] [SCORE none|<modifiers>] [PROBS]
#                      [HEADS n] [KV_HEADS n] [D_K n] [D_V n]
#                      [MAX_QUERIES n] [MIN_KEYS n]
#                      [SCORE_MOD file.cpp:function] [MASK_MOD file.cpp:function]
#                      [INPUTS name:type:rank...]
#                      [SCHEDULE <name>|TUNED] [TUNING "name=value,..."]
#                      [TARGETS <Halide target>...] [CUDA [CUDA_CAPABILITY nn]]
#                      [KEYS_ESTIMATE n])
#
# Each option is a field of the kernel's variant (runtime/include/attngen/variant.h, whose spec
# writes them in lower case: op:attention,mask:causal,d_k:64,...):
#   NAME        the kernel's C function and library target; left out, a name that says what
#               varies, e.g. attention_f32_causal_d64_cpu_fused
#   OP          what the kernel computes: attention, the multi-head layer (mha), or a stage alone
#   STORAGE     the element type of q, k, v and out: f32 (the default), bf16 or f16 (OP
#               attention; computed in float32, docs/api.md "Storage types")
#   KV_STORAGE  the element type of k and v when it differs from STORAGE's: f32 q and out with a
#               bf16 or f16 KV cache (OP attention)
#   MASK        none (the default) or mask kinds joined by '+': causal (bottom-right aligned,
#               query i sees key j iff j <= i + Nk - Nq), window (a sliding window), prefix
#               (prefix-LM, with causal), segments (packed documents); key_lengths are honoured
#               by every kernel. attngen/modifiers.h states each kind exactly.
#   SCORE       none (the default) or score modifiers joined by '+': softcap, alibi, bias
#   SCORE_MOD, MASK_MOD, INPUTS
#               user-written modifiers and the extra tensors they read (OP attention;
#               AttngenUserModifiers.cmake, docs/modifiers.md). The runtime never dispatches to
#               such a kernel by itself: calls name it and pass Modifiers::inputs by name.
#   PROBS       the kernel also writes the probabilities (OP attention)
#   HEADS, KV_HEADS, D_K, D_V
#               specialize the kernel to these values; left out, it reads them from the buffers
#               at run time. D_V defaults to D_K when only D_K is given.
#   MAX_QUERIES a kernel for calls with at most this many queries (decode steps); MIN_KEYS one
#               for calls with at least this many keys (long sequences). The dispatch prefers
#               such kernels for the calls they fit; both compute any call correctly.
#   SCHEDULE    a schedule of schedules/ (default cpu_fused; cuda_fused with CUDA, cuda_tiled for
#               mha), or one of Halide's autoschedulers in attngen's own build. TUNED takes the
#               schedule and parameters that `attngen tune` found for this kernel's bucket from
#               the tuning database of the first target (<attngen_TUNING_DIR>/<target>.json);
#               the parameters apply to that target's code only, as they were measured there.
#               Without a matching bucket it uses cpu_fused and says so in a status message.
#   TUNING      schedule parameters over the schedule's defaults, "name=value,..."
#   TARGETS     Halide targets, most capable first (default: the build's targets); several give
#               one library that picks the best one for the running CPU
#   CUDA        a CUDA entry (the first target with cuda and cuda_capability_<CUDA_CAPABILITY>,
#               default 80) before the CPU targets, which run where no CUDA device is found
#   KEYS_ESTIMATE
#               the key count an autoscheduler plans for (1024 when left out)
#
# Every kernel is compiled without a Halide runtime of its own and links the one runtime that the
# attngen runtime library uses: a program must hold exactly one. Hence every target must have the
# architecture and operating system of the build's targets. A kernel of attngen's own build goes
# into the runtime's registry; one of another project gets the header <name>_kernel.h, which
# declares `attngen::Kernel <name>_kernel();` for attngen::attention(args, kernel) or
# MhaConfig::kernel (linking <name> links attngen::runtime).
#
# An unknown option, a missing value or an invalid value stops the configure with a message that
# names it.
#
# What the including build provides: attngen_TARGETS (the default targets), attngen_RUNTIME_CUDA
# (whether the shared Halide runtime has CUDA support), attngen_TUNING_DIR, attngen_MODULE_DIR
# (this folder), attngen_GENERATORS (the generator executable's target), attngen_HALIDE_RUNTIME
# (the shared Halide runtime's target; empty: the first kernel makes it), attngen_DSL_INCLUDE_DIR
# (where attngen/user_modifiers.h is) and attngen_OWN_BUILD (true in attngen's own build).

include("${CMAKE_CURRENT_LIST_DIR}/AttngenTuningDatabase.cmake")
include("${CMAKE_CURRENT_LIST_DIR}/AttngenKernelOptions.cmake")
include("${CMAKE_CURRENT_LIST_DIR}/AttngenUserModifiers.cmake")

# The C++ expression that makes the attngen::Kernel of a compiled kernel, for the registry of
# attngen's own build and for the <name>_kernel.cpp of another project's kernel.
function(_attngen_kernel_entry OUT NAME SPEC TARGETS)
    string(REPLACE ";" "," targets "${TARGETS}")
    set(${OUT} "attngen::Kernel::compiled(\"${NAME}\", \"${SPEC}\", \"${targets}\", &${NAME}_argv, &${NAME}_metadata)"
        PARENT_SCOPE)
endfunction()

function(attngen_add_kernel)
    _attngen_parse_kernel_options(K ${ARGN})

    # The first kernel creates the Halide runtime that all the others share, unless the build
    # provides one.
    set(runtime "${attngen_HALIDE_RUNTIME}")
    if (NOT runtime)
        get_property(runtime GLOBAL PROPERTY ATTNGEN_HALIDE_RUNTIME)
    endif ()
    set(use_runtime "")
    if (runtime)
        set(use_runtime USE_RUNTIME ${runtime})
    endif ()
    set(autoscheduler "")
    if (K_AUTOSCHEDULER)
        set(autoscheduler AUTOSCHEDULER Halide::${K_SCHEDULE})
    endif ()
    # attention and mha have a generator each; the stages share one (generators/).
    set(generator stage)
    if (K_OP MATCHES "^(attention|mha)$")
        set(generator ${K_OP})
    endif ()
    _attngen_user_modifier_plugin(plugin ${K_NAME} K)
    set(params "variant=${K_SPEC}")
    if (K_INPUTS_PARAM)
        list(APPEND params "inputs=${K_INPUTS_PARAM}")
    endif ()
    add_halide_library(${K_NAME}
        FROM ${attngen_GENERATORS}
        GENERATOR ${generator}
        FUNCTION_NAME ${K_NAME}
        TARGETS ${K_TARGETS}
        FEATURES user_context
        ${use_runtime}
        ${autoscheduler}
        ${plugin}
        PARAMS ${params})
    if (NOT runtime)
        set_property(GLOBAL PROPERTY ATTNGEN_HALIDE_RUNTIME "${K_NAME}.runtime")
    endif ()

    _attngen_kernel_entry(entry ${K_NAME} "${K_SPEC}" "${K_TARGETS}")
    set_property(GLOBAL PROPERTY ATTNGEN_KERNEL_ENTRY_${K_NAME} "${entry}")
    if (K_OP MATCHES "^(attention|mha)$")
        set_property(GLOBAL APPEND PROPERTY ATTNGEN_KERNELS ${K_NAME})
    else ()
        set_property(GLOBAL APPEND PROPERTY ATTNGEN_STAGE_KERNELS ${K_NAME})
    endif ()
    if (K_CUDA)
        set_property(GLOBAL APPEND PROPERTY ATTNGEN_CUDA_KERNELS ${K_NAME})
    endif ()
    if (attngen_OWN_BUILD)
        return()
    endif ()

    # Another project's kernel: the function that describes it to the runtime.
    set(kernel_dir "${CMAKE_CURRENT_BINARY_DIR}/${K_NAME}_kernel")
    set(KERNEL_NAME "${K_NAME}")
    set(KERNEL_ENTRY "${entry}")
    configure_file("${attngen_MODULE_DIR}/kernel.h.in" "${kernel_dir}/${K_NAME}_kernel.h" @ONLY)
    configure_file("${attngen_MODULE_DIR}/kernel.cpp.in" "${kernel_dir}/${K_NAME}_kernel.cpp" @ONLY)
    target_sources(${K_NAME} PRIVATE "${kernel_dir}/${K_NAME}_kernel.cpp")
    target_include_directories(${K_NAME} PUBLIC "${kernel_dir}" "${CMAKE_CURRENT_BINARY_DIR}")
    target_link_libraries(${K_NAME} PUBLIC attngen::runtime PRIVATE Halide::Runtime)
    target_compile_features(${K_NAME} PRIVATE cxx_std_17)
endfunction()
