# attngen's own kernels: attngen_add_kernel (the function that other projects get from the
# package, cmake/package/AttngenAddKernel.cmake) set up for this build, the variant table
# (kernels/variants.txt) and the kernels of the tuning databases.

# What attngen_add_kernel needs to know about this build. The generators are this build's own, or
# those of a native build that a cross build imports (cmake/CrossCompiling.cmake); the first
# kernel makes the Halide runtime that every kernel shares.
set(attngen_TARGETS "${ATTNGEN_TARGETS}")
set(attngen_RUNTIME_CUDA ${ATTNGEN_CUDA})
set(attngen_TUNING_DIR "${PROJECT_SOURCE_DIR}/tuning")
set(attngen_MODULE_DIR "${PROJECT_SOURCE_DIR}/cmake/package")
set(attngen_DSL_INCLUDE_DIR "${PROJECT_SOURCE_DIR}/generators/dsl")
set(attngen_GENERATORS attngen_generators)
set(attngen_HALIDE_RUNTIME "")
set(attngen_OWN_BUILD TRUE)
include(${PROJECT_SOURCE_DIR}/cmake/package/AttngenAddKernel.cmake)
include(${PROJECT_SOURCE_DIR}/cmake/AttngenVariantTable.cmake)

# attngen_add_tuned_kernels(FILE <database.json>): one attngen kernel per improving bucket of a
# tuning database (written by `attngen tune`, see tools/tuner/database.h): the bucket's variant,
# its winner's schedule and parameters included, compiled for the database's target alone (one
# of ATTNGEN_TARGETS). The runtime prefers such a kernel for calls that fit its bucket where the
# CPU runs that target and no more capable one of the build's: the parameters were measured on a
# machine of that class, and on another they can lose to the defaults (the d256 winner of the
# AVX-512 database, value_key_chunk 128, made the kernel about 1.5x slower than the untuned one on
# an AVX2 Zen 3).
function(attngen_add_tuned_kernels)
    cmake_parse_arguments(T "" "FILE" "" ${ARGN})
    if (NOT T_FILE OR NOT EXISTS "${T_FILE}")
        message(FATAL_ERROR "attngen_add_tuned_kernels: FILE '${T_FILE}' does not exist")
    endif ()
    attngen_read_tuning_database("${T_FILE}" json buckets)
    string(JSON target ERROR_VARIABLE err GET "${json}" target)
    if (err OR NOT target IN_LIST ATTNGEN_TARGETS)
        message(FATAL_ERROR "attngen_add_tuned_kernels: ${T_FILE} was tuned for the target "
                            "'${target}', which is not one of this build's targets "
                            "(ATTNGEN_TARGETS: ${ATTNGEN_TARGETS})")
    endif ()
    if (buckets EQUAL 0)
        return()
    endif ()
    math(EXPR last "${buckets} - 1")
    foreach (i RANGE ${last})
        # A bucket whose search found nothing better than the default build's kernel keeps it.
        string(JSON improves GET "${json}" buckets ${i} improves)
        if (NOT improves)
            continue()
        endif ()
        string(JSON spec GET "${json}" buckets ${i} variant)
        attngen_variant_options("${spec}" args)
        attngen_add_kernel(${args} TARGETS ${target})
    endforeach ()
endfunction()
