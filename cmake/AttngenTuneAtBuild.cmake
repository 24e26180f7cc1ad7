# ATTNGEN_TUNE_AT_BUILD: tune for the build machine while building, and build attngen again with
# the kernels of that tuning.
#
# The kernels a build compiles must be known when CMake configures it, and the tuning result
# exists only after the tuner (part of this build) has run. So this build runs the tuner (a
# custom target, ATTNGEN_TUNE_BUDGET seconds over ATTNGEN_TUNE_SHAPES), then configures and
# builds the same sources a second time, as an external project in <build>/tuned, with
# ATTNGEN_TUNING_FILES pointing at the result and the generators of this build. That inner build
# is the tuned attngen: its runtime, command line and tests.

include(ExternalProject)

set(ATTNGEN_TUNE_BUDGET 600 CACHE STRING "Seconds the build may spend tuning (ATTNGEN_TUNE_AT_BUILD)")
set(ATTNGEN_TUNE_SHAPES "" CACHE STRING
    "Shapes to tune at build time, a ;-list of attngen tune specs; empty for attngen tune's default set")

function(attngen_tune_at_build)
    if (CMAKE_CROSSCOMPILING)
        message(FATAL_ERROR "ATTNGEN_TUNE_AT_BUILD measures on the build machine; a cross build "
                "cannot (tune natively with attngen tune and pass ATTNGEN_TUNING_FILES instead)")
    endif ()
    set(result "${PROJECT_BINARY_DIR}/tuning/build-machine.json")
    set(shape_args "")
    if (ATTNGEN_TUNE_SHAPES)
        set(shape_args --shapes ${ATTNGEN_TUNE_SHAPES})
    endif ()
    # --resume: a build interrupted while tuning continues where it stopped. No --target: the
    # tuner measures for the most capable of ATTNGEN_TARGETS that the build machine runs.
    add_custom_command(
        OUTPUT "${result}"
        COMMAND ${CMAKE_COMMAND} -E make_directory "${PROJECT_BINARY_DIR}/tuning"
        COMMAND attngen-tune ${shape_args} --budget ${ATTNGEN_TUNE_BUDGET} --out "${result}" --resume
        DEPENDS attngen-tune
        COMMENT "Tuning attention kernels for this machine (${ATTNGEN_TUNE_BUDGET} s)"
        USES_TERMINAL
        VERBATIM)
    add_custom_target(attngen_tune_build_machine ALL DEPENDS "${result}")

    ExternalProject_Add(attngen_tuned
        SOURCE_DIR "${PROJECT_SOURCE_DIR}"
        BINARY_DIR "${PROJECT_BINARY_DIR}/tuned"
        CMAKE_GENERATOR "${CMAKE_GENERATOR}"
        CMAKE_ARGS
            -DCMAKE_BUILD_TYPE=${CMAKE_BUILD_TYPE}
            "-DATTNGEN_TARGETS=${ATTNGEN_TARGETS}"
            "-DATTNGEN_TUNING_FILES=${result}"
            -DATTNGEN_TUNE_AT_BUILD=OFF
            "-DATTNGEN_VARIANT_TABLE=${ATTNGEN_VARIANT_TABLE}"
            "-Dattngen-halide_generators_ROOT=${PROJECT_BINARY_DIR}/cmake"
        INSTALL_COMMAND ""
        BUILD_ALWAYS ON
        DEPENDS attngen_tune_build_machine attngen_generators)
endfunction()
