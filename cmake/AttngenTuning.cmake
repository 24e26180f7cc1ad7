# Kernels from a tuning database (written by `attngen tune`, see tools/tuner/database.h).
#
#   attngen_add_tuned_kernels(FILE <database.json>)
#
# adds one attention kernel per bucket of the database: its schedule, compiled with the tuned
# parameters and specialized to the bucket's mask, head dims and query count, for the database's
# target alone (which must be one of ATTNGEN_TARGETS). The runtime prefers such a kernel for calls
# that fit its bucket where the CPU runs that target and no more capable one of the build's: the
# parameters were measured on a machine of that class, and on another they can lose to the
# defaults (the d256 winner of the AVX-512 database, value_key_chunk 128, made the kernel about
# 1.5x slower than the untuned one on an AVX2 Zen 3).

include(${CMAKE_CURRENT_LIST_DIR}/package/AttngenTuningDatabase.cmake)

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
        string(JSON schedule GET "${json}" buckets ${i} schedule)
        string(JSON causal GET "${json}" buckets ${i} causal)
        string(JSON d_k GET "${json}" buckets ${i} d_k)
        string(JSON d_v GET "${json}" buckets ${i} d_v)
        string(JSON max_queries GET "${json}" buckets ${i} max_queries)
        attngen_tuning_bucket_params("${json}" ${i} tuning)
        string(REPLACE ";" "," tuning "${tuning}")
        set(args OP attention SCHEDULE ${schedule} TARGET ${target})
        if (causal)
            list(APPEND args CAUSAL)
        endif ()
        if (d_k GREATER 0)
            list(APPEND args D_K ${d_k})
        endif ()
        if (d_v GREATER 0)
            list(APPEND args D_V ${d_v})
        endif ()
        if (max_queries GREATER 0)
            list(APPEND args MAX_QUERIES ${max_queries})
        endif ()
        if (tuning)
            list(APPEND args TUNING "${tuning}")
        endif ()
        attngen_add_kernel(${args})
    endforeach ()
endfunction()
