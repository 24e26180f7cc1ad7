# attngen_add_kernel() for projects that use the installed attngen package (find_package(attngen)).
#
#   attngen_add_kernel(NAME <name> GENERATOR attention|mha
#                      [CAUSAL] [PROBS] [HEADS n] [KV_HEADS n] [HEAD_DIM d_k] [VALUE_DIM d_v]
#                      [SCHEDULE <name>|TUNED] [TARGETS <Halide target>...]
#                      [CUDA [CUDA_CAPABILITY nn]])
#
# runs the installed generator at build time and makes a static library target <name> with two
# headers: <name>.h, the kernel's C function `<name>`, and <name>_descriptor.h, which declares
# `attngen::KernelDescriptor <name>_descriptor()` for attngen::attention(args, descriptor) (an
# attention kernel) or MhaConfig::kernel (an mha kernel). Linking <name> links attngen::runtime.
#
#   CAUSAL      bottom-right aligned causal mask (attention and mha)
#   PROBS       the kernel also writes the probabilities (attention only)
#   HEADS, KV_HEADS, HEAD_DIM, VALUE_DIM
#               specialize the kernel to these values; left out, it reads them from the buffers
#               at run time. VALUE_DIM defaults to HEAD_DIM when only HEAD_DIM is given.
#   SCHEDULE    a schedule of the generators (default cpu_fused); an unknown name fails the build
#               with the list of known ones. TUNED takes the schedule and parameters that
#               `attngen tune` found for this kernel's bucket from the tuning database of the first
#               target (<attngen_TUNING_DIR>/<target>.json); the parameters apply to that target's
#               code only, and the other targets run the schedule with its defaults, as the
#               parameters were measured on the first. Without a database or a matching bucket
#               it uses cpu_fused and says so in a status message, because the default schedule
#               is what the runtime itself runs for untuned shapes.
#   TARGETS     Halide targets, most capable first (default: the installed build's targets);
#               several give one library that picks the best one for the running CPU.
#   CUDA        adds a CUDA entry (the first target with cuda and cuda_capability_<CUDA_CAPABILITY>,
#               default 80) before the CPU targets, which run where no CUDA device is found; the
#               default schedule becomes cuda_fused (cuda_tiled for mha). Needs an attngen built
#               with CUDA (ATTNGEN_CUDA, on by default on x86-64, or ATTNGEN_RUNTIME_CUDA).
#
# Every kernel is compiled without a Halide runtime of its own (add_halide_library's no_runtime)
# and links attngen::halide_runtime, the one the installed runtime library already uses: a
# program must hold exactly one Halide runtime. Hence every target must have the architecture
# and operating system of the installed build.
#
# An unknown option, a missing value or an invalid value stops the configure with a message that
# names it.

include("${CMAKE_CURRENT_LIST_DIR}/AttngenTuningDatabase.cmake")

# Halide 14's CUDA capability features.
set(_attngen_cuda_capabilities 30 32 35 50 61 70 75 80 86)

# Stops the configure; the message may come in several pieces, which are joined.
function(_attngen_kernel_error NAME)
    string(JOIN "" text ${ARGN})
    message(FATAL_ERROR "attngen_add_kernel(NAME ${NAME}): ${text}")
endfunction()

# The architecture-bits-os triple of a Halide target ("host" is this machine).
function(_attngen_target_triple OUT HALIDE_TARGET)
    if (HALIDE_TARGET MATCHES "^host")
        set(${OUT} "${Halide_HOST_TARGET}" PARENT_SCOPE)
    else ()
        string(REGEX MATCH "^[^-]+-[^-]+-[^-]+" triple "${HALIDE_TARGET}")
        set(${OUT} "${triple}" PARENT_SCOPE)
    endif ()
endfunction()

# Sets <prefix>_SCHEDULE, <prefix>_TUNING and <prefix>_TUNING_TARGET (the target it was measured
# for) from the tuning database for the kernel described by the remaining arguments, or cpu_fused
# without parameters when the database has nothing for it.
function(_attngen_tuned_schedule PREFIX NAME GENERATOR CAUSAL D_K D_V TARGETS)
    set(${PREFIX}_SCHEDULE cpu_fused PARENT_SCOPE)
    set(${PREFIX}_TUNING "" PARENT_SCOPE)
    set(${PREFIX}_TUNING_TARGET "" PARENT_SCOPE)
    if (NOT GENERATOR STREQUAL "attention")
        message(STATUS "attngen_add_kernel(NAME ${NAME}): SCHEDULE TUNED: the tuning databases "
                "hold attention kernels only; using the default schedule cpu_fused")
        return()
    endif ()
    list(GET TARGETS 0 target)
    set(file "${attngen_TUNING_DIR}/${target}.json")
    if (NOT EXISTS "${file}")
        message(STATUS "attngen_add_kernel(NAME ${NAME}): SCHEDULE TUNED: no tuning database "
                "${file}; using the default schedule cpu_fused")
        return()
    endif ()
    attngen_read_tuning_database("${file}" json count)
    # The bucket of exactly this specialization, or else the generic bucket of the same mask.
    set(found "")
    foreach (want IN ITEMS "${D_K};${D_V}" "0;0")
        list(GET want 0 want_d_k)
        list(GET want 1 want_d_v)
        if (count EQUAL 0 OR found)
            break()
        endif ()
        math(EXPR last "${count} - 1")
        foreach (i RANGE ${last})
            foreach (field IN ITEMS improves causal d_k d_v max_queries)
                string(JSON ${field} GET "${json}" buckets ${i} ${field})
            endforeach ()
            if (improves AND max_queries EQUAL 0 AND d_k EQUAL want_d_k AND d_v EQUAL want_d_v
                AND ((causal AND CAUSAL) OR (NOT causal AND NOT CAUSAL)))
                set(found ${i})
                break()
            endif ()
        endforeach ()
    endforeach ()
    if (found STREQUAL "")
        message(STATUS "attngen_add_kernel(NAME ${NAME}): SCHEDULE TUNED: ${file} has no improving "
                "bucket for this kernel; using the default schedule cpu_fused")
        return()
    endif ()
    string(JSON schedule GET "${json}" buckets ${found} schedule)
    # Generator arguments are name=value; the parameters are passed as name:value inside.
    attngen_tuning_bucket_params("${json}" ${found} tuning)
    string(REPLACE ";" "," tuning "${tuning}")
    string(REPLACE "=" ":" tuning "${tuning}")
    list(LENGTH TARGETS target_count)
    set(others "")
    if (target_count GREATER 1)
        set(others "; its other targets take the schedule's defaults")
    endif ()
    message(STATUS "attngen_add_kernel(NAME ${NAME}): SCHEDULE TUNED: ${schedule} ${tuning} "
            "from ${file}, for ${target}${others}")
    set(${PREFIX}_SCHEDULE "${schedule}" PARENT_SCOPE)
    set(${PREFIX}_TUNING "${tuning}" PARENT_SCOPE)
    set(${PREFIX}_TUNING_TARGET "${target}" PARENT_SCOPE)
endfunction()

function(attngen_add_kernel)
    set(flags CAUSAL PROBS CUDA)
    set(values NAME GENERATOR HEADS KV_HEADS HEAD_DIM VALUE_DIM SCHEDULE CUDA_CAPABILITY)
    set(lists TARGETS)
    cmake_parse_arguments(PARSE_ARGV 0 K "${flags}" "${values}" "${lists}")
    set(name "${K_NAME}")
    if (NOT name)
        set(name "?")
    endif ()
    if (K_UNPARSED_ARGUMENTS)
        string(REPLACE ";" " " unknown "${K_UNPARSED_ARGUMENTS}")
        _attngen_kernel_error("${name}" "unknown option or stray value: ${unknown} (options: "
                              "NAME GENERATOR CAUSAL PROBS HEADS KV_HEADS HEAD_DIM VALUE_DIM "
                              "SCHEDULE TARGETS CUDA CUDA_CAPABILITY)")
    endif ()
    if (K_KEYWORDS_MISSING_VALUES)
        _attngen_kernel_error("${name}" "${K_KEYWORDS_MISSING_VALUES} needs a value")
    endif ()
    if (NOT DEFINED K_NAME)
        _attngen_kernel_error("${name}" "NAME is required")
    endif ()
    if (NOT "${K_NAME}" MATCHES "^[A-Za-z_][A-Za-z0-9_]*$")
        _attngen_kernel_error("${name}" "NAME must be a C identifier (it names the kernel's C function)")
    endif ()
    if (TARGET ${K_NAME})
        _attngen_kernel_error("${name}" "a target named ${K_NAME} already exists")
    endif ()
    if (NOT "${K_GENERATOR}" MATCHES "^(attention|mha)$")
        _attngen_kernel_error("${name}" "GENERATOR must be attention or mha, got '${K_GENERATOR}'")
    endif ()
    foreach (v IN ITEMS HEADS KV_HEADS HEAD_DIM VALUE_DIM CUDA_CAPABILITY)
        if (DEFINED K_${v} AND NOT "${K_${v}}" MATCHES "^[1-9][0-9]*$")
            _attngen_kernel_error("${name}" "${v} must be a positive integer, got '${K_${v}}'")
        endif ()
    endforeach ()
    if (K_HEADS AND K_KV_HEADS)
        math(EXPR rem "${K_HEADS} % ${K_KV_HEADS}")
        if (NOT rem EQUAL 0)
            _attngen_kernel_error("${name}" "KV_HEADS ${K_KV_HEADS} does not divide HEADS ${K_HEADS}")
        endif ()
    endif ()
    if (K_PROBS AND NOT K_GENERATOR STREQUAL "attention")
        _attngen_kernel_error("${name}" "PROBS applies to GENERATOR attention only")
    endif ()
    if (K_HEAD_DIM AND NOT K_VALUE_DIM)
        set(K_VALUE_DIM ${K_HEAD_DIM})
    endif ()
    if (NOT K_SCHEDULE AND K_CUDA)
        # The GPU schedules; on the CPU entries they fall back to CPU schedules.
        if (K_GENERATOR STREQUAL "mha")
            set(K_SCHEDULE cuda_tiled)
        else ()
            set(K_SCHEDULE cuda_fused)
        endif ()
    elseif (NOT K_SCHEDULE)
        set(K_SCHEDULE cpu_fused)
    elseif (NOT "${K_SCHEDULE}" MATCHES "^[A-Za-z][A-Za-z0-9_]*$")
        _attngen_kernel_error("${name}" "SCHEDULE must be a schedule name or TUNED, got '${K_SCHEDULE}'")
    endif ()

    # Targets: the installed build's by default. Each must fit the installed Halide runtime.
    set(targets "${K_TARGETS}")
    if (NOT targets)
        set(targets "${attngen_TARGETS}")
    endif ()
    list(GET attngen_TARGETS 0 package_target)
    _attngen_target_triple(package_triple "${package_target}")
    foreach (t IN LISTS targets)
        # TARGETS takes every value up to the next option, so a misspelled option after it lands
        # here; Halide targets are lower case.
        if ("${t}" MATCHES "^[A-Z][A-Z0-9_]*$")
            _attngen_kernel_error("${name}" "'${t}' in TARGETS is not a Halide target: a "
                                  "misspelled option? (options: NAME GENERATOR CAUSAL PROBS HEADS "
                                  "KV_HEADS HEAD_DIM VALUE_DIM SCHEDULE TARGETS CUDA CUDA_CAPABILITY)")
        endif ()
        if (NOT "${t}" MATCHES "^(host|[a-z0-9_]+-(32|64)-[a-z0-9_]+)(-[a-z0-9_]+)*$")
            _attngen_kernel_error("${name}" "'${t}' is not a Halide target (e.g. host, "
                                  "x86-64-linux-avx-avx2-fma, arm-64-linux)")
        endif ()
        if (t MATCHES "(^|-)(cuda|cuda_capability_[0-9]+)(-|$)")
            _attngen_kernel_error("${name}" "target '${t}' names CUDA features: write the CUDA "
                                  "option instead")
        endif ()
        if (t MATCHES "(^|-)(no_runtime|user_context)(-|$)")
            _attngen_kernel_error("${name}" "target '${t}': no_runtime and user_context are "
                                  "always added")
        endif ()
        _attngen_target_triple(triple "${t}")
        if (NOT triple STREQUAL package_triple)
            _attngen_kernel_error("${name}" "target '${t}' is ${triple}, but the installed attngen "
                                  "runtime (and its Halide runtime, which every kernel shares) is "
                                  "${package_triple}")
        endif ()
    endforeach ()
    if (DEFINED K_CUDA_CAPABILITY AND NOT K_CUDA)
        _attngen_kernel_error("${name}" "CUDA_CAPABILITY needs the CUDA option")
    endif ()
    if (K_CUDA)
        if (NOT attngen_RUNTIME_CUDA)
            _attngen_kernel_error("${name}" "CUDA needs an attngen whose shared Halide runtime has "
                                  "CUDA support; the one found (${attngen_DIR}) was built without "
                                  "it: rebuild attngen with -DATTNGEN_RUNTIME_CUDA=ON")
        endif ()
        if (NOT K_CUDA_CAPABILITY)
            set(K_CUDA_CAPABILITY 80)
        endif ()
        if (NOT K_CUDA_CAPABILITY IN_LIST _attngen_cuda_capabilities)
            string(REPLACE ";" ", " known "${_attngen_cuda_capabilities}")
            _attngen_kernel_error("${name}" "CUDA_CAPABILITY ${K_CUDA_CAPABILITY} is not one of "
                                  "Halide 14's: ${known}")
        endif ()
        # A CUDA entry first, the CPU targets after it: the runtime's target check picks the CUDA
        # entry only where it finds a CUDA device, and the CPU entries everywhere else.
        list(GET targets 0 first_target)
        list(PREPEND targets "${first_target}-cuda-cuda_capability_${K_CUDA_CAPABILITY}")
    endif ()

    foreach (v IN ITEMS HEADS KV_HEADS HEAD_DIM VALUE_DIM)
        if (NOT K_${v})
            set(K_${v} 0)
        endif ()
    endforeach ()
    set(tuning "")
    if (K_SCHEDULE STREQUAL "TUNED")
        _attngen_tuned_schedule(T ${K_NAME} ${K_GENERATOR} "${K_CAUSAL}" ${K_HEAD_DIM}
                                ${K_VALUE_DIM} "${targets}")
        set(K_SCHEDULE "${T_SCHEDULE}")
        set(tuning "${T_TUNING}")
        set(tuning_target "${T_TUNING_TARGET}")
    endif ()

    set(params schedule=${K_SCHEDULE} heads=${K_HEADS} kv_heads=${K_KV_HEADS} d_k=${K_HEAD_DIM}
               d_v=${K_VALUE_DIM})
    if (K_CAUSAL)
        list(APPEND params causal=true)
    else ()
        list(APPEND params causal=false)
    endif ()
    if (tuning)
        list(APPEND params "tuning=${tuning}" "tuning_target=${tuning_target}")
    endif ()
    if (K_GENERATOR STREQUAL "attention")
        if (K_PROBS)
            list(APPEND params output_probs=true)
        else ()
            list(APPEND params output_probs=false)
        endif ()
    endif ()

    add_halide_library(${K_NAME}
        FROM attngen::generators
        GENERATOR ${K_GENERATOR}
        FUNCTION_NAME ${K_NAME}
        TARGETS ${targets}
        FEATURES user_context
        USE_RUNTIME attngen::halide_runtime
        PARAMS ${params})

    # The descriptor: what the kernel is specialized to and its function, for the runtime.
    set(causal false)
    set(probs false)
    if (K_CAUSAL)
        set(causal true)
    endif ()
    if (K_PROBS)
        set(probs true)
    endif ()
    if (K_GENERATOR STREQUAL "mha")
        set(function_field mha)
    elseif (K_PROBS)
        set(function_field attention_probs)
    else ()
        set(function_field attention)
    endif ()
    set(descriptor_dir "${CMAKE_CURRENT_BINARY_DIR}/${K_NAME}_descriptor")
    configure_file("${attngen_MODULE_DIR}/kernel_descriptor.h.in"
                   "${descriptor_dir}/${K_NAME}_descriptor.h" @ONLY)
    configure_file("${attngen_MODULE_DIR}/kernel_descriptor.cpp.in"
                   "${descriptor_dir}/${K_NAME}_descriptor.cpp" @ONLY)
    target_sources(${K_NAME} PRIVATE "${descriptor_dir}/${K_NAME}_descriptor.cpp")
    target_include_directories(${K_NAME} PUBLIC "${descriptor_dir}" "${CMAKE_CURRENT_BINARY_DIR}")
    target_link_libraries(${K_NAME} PUBLIC attngen::runtime PRIVATE Halide::Runtime)
    target_compile_features(${K_NAME} PRIVATE cxx_std_17)
endfunction()
