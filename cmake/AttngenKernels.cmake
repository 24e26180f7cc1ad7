# Functions that turn generator variants into static libraries and record them for the runtime's
# kernel registry.
#
#   attngen_add_kernel(OP attention|mha|projection|scores|softmax|weighted_sum
#                      SCHEDULE <name> [CAUSAL] [PROBS]
#                      [HEADS n] [KV_HEADS n] [D_K n] [D_V n] [MAX_QUERIES n] [MIN_KEYS n]
#                      [KEYS_ESTIMATE n] [TUNING "name=value,..."] [TARGET <target>] [CUDA])
#
# CUDA compiles the kernel for ${ATTNGEN_CUDA_TARGETS} instead: a CUDA entry (host code and PTX)
# first, then a CPU entry that runs where no CUDA device is usable; the runtime's target check
# (runtime/src/cpu_targets.cpp) picks the CUDA entry only when it finds a device.
#
# MAX_QUERIES n makes a kernel for calls with at most n queries (decode steps); the runtime
# prefers it for such calls. MIN_KEYS n makes a kernel for calls with at least n keys (long
# sequences, whose scores outgrow the caches); the runtime prefers it for such calls. Both kernels
# still compute any call correctly. TUNING overrides the schedule's parameters.
#
# TARGET t compiles the kernel for t alone, one of ${ATTNGEN_TARGETS}, instead of all of them: a
# kernel tuned on a machine of t's class (attngen_add_tuned_kernels). Its parameters were measured
# there only, and the runtime lets it serve calls only where the CPU runs t and nothing more
# capable of the build's targets (runtime/src/dispatch.cpp).
#
# KEYS_ESTIMATE n (autoschedulers only) is the key count that Halide's autoscheduler plans for;
# it also takes the query count from MAX_QUERIES and the heads and head dims from HEADS, D_K and
# D_V, else 1024 keys and queries, 8 heads and d 64. An autoscheduled kernel fails on calls
# smaller than its tiles, so a baseline for a small shape needs that shape's estimates.
#
# compiles one variant with add_halide_library for ${ATTNGEN_TARGETS}. Every kernel shares one
# Halide runtime and takes a user_context argument, through which the runtime receives the
# kernel's error messages. attention and mha kernels are recorded in the global property
# ATTNGEN_KERNELS; attngen_write_registry() turns that list into the runtime's registry.

set(ATTNGEN_OPS attention mha projection scores softmax weighted_sum)
# Halide's autoschedulers, usable as SCHEDULE names: the generator then applies no schedule of
# ours and Halide's plugin schedules the same algorithm from the generator's estimates.
set(ATTNGEN_AUTOSCHEDULERS Adams2019 Li2018 Mullapudi2016)
set(ATTNGEN_REGISTRY_OPS attention mha)

# The kernel name says what varies, e.g. attention_f32_causal_d64_cpu_basic.
function(_attngen_kernel_name OUT)
    cmake_parse_arguments(K "CAUSAL;PROBS"
                          "OP;SCHEDULE;HEADS;KV_HEADS;D_K;D_V;MAX_QUERIES;MIN_KEYS;KEYS_ESTIMATE;TUNING;TARGET"
                          "" ${ARGN})
    set(name "${K_OP}_f32")
    if (K_CAUSAL)
        string(APPEND name "_causal")
    endif ()
    if (K_PROBS)
        string(APPEND name "_probs")
    endif ()
    if (K_HEADS)
        string(APPEND name "_h${K_HEADS}")
    endif ()
    if (K_KV_HEADS)
        string(APPEND name "_kv${K_KV_HEADS}")
    endif ()
    if (K_D_K AND K_D_V AND K_D_K EQUAL K_D_V)
        string(APPEND name "_d${K_D_K}")
    else ()
        if (K_D_K)
            string(APPEND name "_dk${K_D_K}")
        endif ()
        if (K_D_V)
            string(APPEND name "_dv${K_D_V}")
        endif ()
    endif ()
    if (K_MAX_QUERIES)
        string(APPEND name "_q${K_MAX_QUERIES}")
    endif ()
    if (K_MIN_KEYS)
        string(APPEND name "_k${K_MIN_KEYS}")
    endif ()
    if (K_KEYS_ESTIMATE)
        string(APPEND name "_nk${K_KEYS_ESTIMATE}")
    endif ()
    if (K_TUNING)
        # Different tunings of one variant, and the same tuning for different targets (databases
        # of two machine classes), need different names; a short hash keeps them apart.
        string(MD5 hash "${K_TUNING}${K_TARGET}")
        string(SUBSTRING "${hash}" 0 6 hash)
        string(APPEND name "_t${hash}")
    endif ()
    set(${OUT} "${name}_${K_SCHEDULE}" PARENT_SCOPE)
endfunction()

function(attngen_add_kernel)
    set(flags CAUSAL PROBS CUDA)
    set(values OP SCHEDULE HEADS KV_HEADS D_K D_V MAX_QUERIES MIN_KEYS KEYS_ESTIMATE TUNING TARGET)
    cmake_parse_arguments(K "${flags}" "${values}" "" ${ARGN})
    if (K_UNPARSED_ARGUMENTS)
        message(FATAL_ERROR "attngen_add_kernel: unknown arguments: ${K_UNPARSED_ARGUMENTS}")
    endif ()
    if (NOT K_OP IN_LIST ATTNGEN_OPS)
        message(FATAL_ERROR "attngen_add_kernel: OP '${K_OP}' is not one of ${ATTNGEN_OPS}")
    endif ()
    if (NOT K_SCHEDULE)
        message(FATAL_ERROR "attngen_add_kernel: SCHEDULE is required")
    endif ()
    foreach (v IN ITEMS HEADS KV_HEADS D_K D_V MAX_QUERIES MIN_KEYS KEYS_ESTIMATE)
        if (DEFINED K_${v} AND NOT K_${v} MATCHES "^[1-9][0-9]*$")
            message(FATAL_ERROR "attngen_add_kernel: ${v} must be a positive integer, got '${K_${v}}'")
        endif ()
    endforeach ()
    if (K_PROBS AND NOT K_OP STREQUAL "attention")
        message(FATAL_ERROR "attngen_add_kernel: PROBS applies to OP attention only")
    endif ()

    _attngen_kernel_name(name ${ARGN})

    set(params "schedule=${K_SCHEDULE}")
    if (K_OP MATCHES "^(attention|mha|scores|softmax|weighted_sum)$")
        if (K_CAUSAL)
            list(APPEND params causal=true)
        else ()
            list(APPEND params causal=false)
        endif ()
    elseif (K_CAUSAL)
        message(FATAL_ERROR "attngen_add_kernel: CAUSAL does not apply to OP ${K_OP}")
    endif ()
    if (K_MAX_QUERIES AND NOT K_OP STREQUAL "attention")
        message(FATAL_ERROR "attngen_add_kernel: MAX_QUERIES applies to OP attention only")
    endif ()
    if (K_MIN_KEYS AND NOT K_OP STREQUAL "attention")
        message(FATAL_ERROR "attngen_add_kernel: MIN_KEYS applies to OP attention only")
    endif ()
    if (K_KEYS_ESTIMATE AND NOT (K_OP STREQUAL "attention"
                                 AND K_SCHEDULE IN_LIST ATTNGEN_AUTOSCHEDULERS))
        message(FATAL_ERROR "attngen_add_kernel: KEYS_ESTIMATE applies to OP attention with one "
                            "of the autoschedulers (${ATTNGEN_AUTOSCHEDULERS}) only")
    endif ()
    if (K_TUNING)
        # Generator arguments are name=value; the parameters are passed as name:value inside.
        string(REPLACE "=" ":" tuning_arg "${K_TUNING}")
        list(APPEND params "tuning=${tuning_arg}")
    endif ()
    if (K_OP STREQUAL "attention")
        if (K_MAX_QUERIES)
            list(APPEND params max_queries=${K_MAX_QUERIES})
        endif ()
        if (K_KEYS_ESTIMATE)
            list(APPEND params keys_estimate=${K_KEYS_ESTIMATE})
        endif ()
        if (K_PROBS)
            list(APPEND params output_probs=true)
        else ()
            list(APPEND params output_probs=false)
        endif ()
    endif ()
    foreach (pair IN ITEMS "HEADS;heads" "KV_HEADS;kv_heads" "D_K;d_k" "D_V;d_v")
        list(GET pair 0 arg)
        list(GET pair 1 param)
        if (K_${arg})
            if (NOT K_OP MATCHES "^(attention|mha)$")
                message(FATAL_ERROR "attngen_add_kernel: ${arg} applies to OP attention or mha only")
            endif ()
            list(APPEND params "${param}=${K_${arg}}")
        endif ()
    endforeach ()

    # The first kernel creates the Halide runtime that all the others share.
    get_property(runtime GLOBAL PROPERTY ATTNGEN_HALIDE_RUNTIME)
    set(use_runtime "")
    if (runtime)
        set(use_runtime USE_RUNTIME ${runtime})
    endif ()
    set(autoscheduler "")
    if (K_SCHEDULE IN_LIST ATTNGEN_AUTOSCHEDULERS)
        set(autoscheduler AUTOSCHEDULER Halide::${K_SCHEDULE})
    endif ()
    set(targets ${ATTNGEN_TARGETS})
    if (K_TARGET)
        if (K_CUDA)
            message(FATAL_ERROR "attngen_add_kernel: TARGET and CUDA exclude each other")
        endif ()
        if (NOT K_TARGET IN_LIST ATTNGEN_TARGETS)
            message(FATAL_ERROR "attngen_add_kernel: TARGET '${K_TARGET}' is not one of this "
                                "build's targets (ATTNGEN_TARGETS: ${ATTNGEN_TARGETS})")
        endif ()
        set(targets ${K_TARGET})
    endif ()
    if (K_CUDA)
        if (NOT ATTNGEN_CUDA)
            message(FATAL_ERROR "attngen_add_kernel: CUDA needs ATTNGEN_CUDA=ON")
        endif ()
        set(targets ${ATTNGEN_CUDA_TARGETS})
    endif ()
    add_halide_library(${name}
        FROM attngen_generators
        GENERATOR ${K_OP}
        FUNCTION_NAME ${name}
        TARGETS ${targets}
        FEATURES user_context
        ${use_runtime}
        ${autoscheduler}
        PARAMS ${params})
    if (NOT runtime)
        set_property(GLOBAL PROPERTY ATTNGEN_HALIDE_RUNTIME "${name}.runtime")
    endif ()

    if (K_OP IN_LIST ATTNGEN_REGISTRY_OPS)
        set_property(GLOBAL APPEND PROPERTY ATTNGEN_KERNELS ${name})
    else ()
        set_property(GLOBAL APPEND PROPERTY ATTNGEN_STAGE_KERNELS ${name})
    endif ()
    foreach (v IN ITEMS OP SCHEDULE HEADS KV_HEADS D_K D_V MAX_QUERIES MIN_KEYS)
        if (NOT K_${v})
            set(K_${v} 0)
        endif ()
        set_property(GLOBAL PROPERTY ATTNGEN_KERNEL_${name}_${v} "${K_${v}}")
    endforeach ()
    set_property(GLOBAL PROPERTY ATTNGEN_KERNEL_${name}_TUNING "${K_TUNING}")
    string(REPLACE ";" "," targets "${targets}")
    set_property(GLOBAL PROPERTY ATTNGEN_KERNEL_${name}_TARGETS "${targets}")
    if (K_CUDA)
        set_property(GLOBAL APPEND PROPERTY ATTNGEN_CUDA_KERNELS ${name})
    endif ()
    foreach (v IN ITEMS CAUSAL PROBS CUDA)
        if (K_${v})
            set_property(GLOBAL PROPERTY ATTNGEN_KERNEL_${name}_${v} true)
        else ()
            set_property(GLOBAL PROPERTY ATTNGEN_KERNEL_${name}_${v} false)
        endif ()
    endforeach ()
endfunction()

# Writes the runtime's table of kernels (a C++ source) to OUTPUT from the kernels added so far.
function(attngen_write_registry OUTPUT)
    get_property(kernels GLOBAL PROPERTY ATTNGEN_KERNELS)
    set(includes "")
    set(entries "")
    foreach (k IN LISTS kernels)
        foreach (v IN ITEMS OP SCHEDULE HEADS KV_HEADS D_K D_V MAX_QUERIES MIN_KEYS TUNING CAUSAL
                          PROBS CUDA TARGETS)
            get_property(${v} GLOBAL PROPERTY ATTNGEN_KERNEL_${k}_${v})
        endforeach ()
        string(APPEND includes "#include \"${k}.h\"\n")
        set(attention_fn nullptr)
        set(probs_fn nullptr)
        set(mha_fn nullptr)
        if (OP STREQUAL "mha")
            set(mha_fn "&${k}")
        elseif (PROBS)
            set(probs_fn "&${k}")
        else ()
            set(attention_fn "&${k}")
        endif ()
        string(APPEND entries
            "    {\"${k}\", Op::${OP}, \"${SCHEDULE}\", \"${TARGETS}\", \"${TUNING}\", ${CAUSAL}, "
            "${PROBS}, ${HEADS}, ${KV_HEADS}, ${D_K}, ${D_V}, ${MAX_QUERIES}, ${MIN_KEYS}, "
            "${attention_fn}, "
            "${probs_fn}, ${mha_fn}, ${CUDA}},\n")
    endforeach ()
    # A build may compile no kernel of a kind; C++ has no empty arrays, so such a table holds
    # one unused zero entry.
    list(LENGTH kernels count)
    set(array_size ${count})
    if (count EQUAL 0)
        set(array_size 1)
    endif ()
    string(REPLACE ";" "," build_targets "${ATTNGEN_TARGETS}")
    string(REPLACE ";" "," autoschedulers "${ATTNGEN_AUTOSCHEDULERS}")
    configure_file(${PROJECT_SOURCE_DIR}/cmake/kernel_registry.cpp.in ${OUTPUT} @ONLY)
endfunction()

# Writes the table of stage kernels (projection, scores, softmax, weighted_sum) that the tests and
# benchmarks call directly, from the stage kernels added so far.
function(attngen_write_stage_registry OUTPUT)
    get_property(kernels GLOBAL PROPERTY ATTNGEN_STAGE_KERNELS)
    set(includes "")
    set(entries "")
    foreach (k IN LISTS kernels)
        get_property(op GLOBAL PROPERTY ATTNGEN_KERNEL_${k}_OP)
        get_property(schedule GLOBAL PROPERTY ATTNGEN_KERNEL_${k}_SCHEDULE)
        get_property(causal GLOBAL PROPERTY ATTNGEN_KERNEL_${k}_CAUSAL)
        string(APPEND includes "#include \"${k}.h\"\n")
        set(fns "")
        foreach (stage IN ITEMS projection scores softmax weighted_sum)
            if (stage STREQUAL op)
                list(APPEND fns "&${k}")
            else ()
                list(APPEND fns nullptr)
            endif ()
        endforeach ()
        string(REPLACE ";" ", " fns "${fns}")
        string(APPEND entries "    {\"${k}\", \"${op}\", \"${schedule}\", ${causal}, ${fns}},\n")
    endforeach ()
    list(LENGTH kernels count)
    set(array_size ${count})
    if (count EQUAL 0)
        set(array_size 1)
    endif ()
    configure_file(${PROJECT_SOURCE_DIR}/cmake/stage_registry.cpp.in ${OUTPUT} @ONLY)
endfunction()
