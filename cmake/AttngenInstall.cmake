# Install rules and the attngen CMake package (find_package(attngen) in another project).
#
# `cmake --install <build> --prefix <prefix>` puts under the prefix:
#   include/attngen/        the runtime's public headers (C++ and C)
#   lib/libattngen_runtime.a, lib/attngen/*.a
#                           the runtime, the kernels it dispatches to and the one Halide runtime
#                           they share (the runtime's link interface names them)
#   bin/                    the attngen command line, attngen-tune and attngen_generators
#   share/attngen/tuning/   the tuning databases (<Halide target>.json)
#   lib/cmake/attngen/      attngenConfig.cmake, its version file, the exported targets and
#                           attngen_add_kernel() for downstream projects
#
# The same package also works from this build tree (-Dattngen_DIR=<build>), which is how the
# test suite checks attngen_add_kernel's option parsing without installing.
#
# Only a native build that builds its own generators installs: the package runs them at the
# downstream project's build time.
if (CMAKE_CROSSCOMPILING)
    return()
endif ()
# A native build that imports another build's generators (attngen-halide_generators_ROOT, as
# variant_table_end_to_end does) has none of its own to install, so it offers no package either.
if (NOT TARGET attngen_generators)
    message(STATUS "attngen: the generators come from another build; no install rules or package")
    return()
endif ()

include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(ATTNGEN_INSTALL_CMAKEDIR "${CMAKE_INSTALL_LIBDIR}/cmake/attngen" CACHE STRING
    "Where attngenConfig.cmake is installed, relative to the prefix")

get_property(attngen_install_kernels GLOBAL PROPERTY ATTNGEN_KERNELS)
get_property(attngen_install_halide_runtime GLOBAL PROPERTY ATTNGEN_HALIDE_RUNTIME)

# Downstream kernels are compiled without a Halide runtime of their own and link this one, so
# that a program holds exactly one (two would define every halide_* symbol twice and keep two
# thread pools). Its name in the package is attngen::halide_runtime.
set_target_properties(${attngen_install_halide_runtime} PROPERTIES EXPORT_NAME halide_runtime)
set_target_properties(attngen_runtime PROPERTIES EXPORT_NAME runtime)
set_target_properties(attngen_generators PROPERTIES EXPORT_NAME generators)

install(DIRECTORY ${PROJECT_SOURCE_DIR}/runtime/include/attngen
        DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
# The header of users' modifiers (for the plugins that attngen_add_kernel builds, not for
# programs: it needs Halide).
install(FILES ${PROJECT_SOURCE_DIR}/generators/dsl/attngen/user_modifiers.h
        DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/attngen)
install(TARGETS attngen_runtime EXPORT attngenTargets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
        INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
# The runtime is a static library, so its private link dependencies (the generated kernels and the
# Halide runtime) are part of its link interface and must be installed with it.
install(TARGETS ${attngen_install_kernels} ${attngen_install_halide_runtime} EXPORT attngenTargets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}/attngen)
install(TARGETS attngen_generators EXPORT attngenTargets RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
if (TARGET attngen)
    # The command line keeps its name: attngen::attngen.
    install(TARGETS attngen EXPORT attngenTargets RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
endif ()
if (TARGET attngen-tune)
    # `attngen tune` runs attngen-tune from its own directory first.
    set_target_properties(attngen-tune PROPERTIES EXPORT_NAME tune)
    install(TARGETS attngen-tune EXPORT attngenTargets RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
endif ()

# Tuning databases: every checked-in one, and those this build compiled (ATTNGEN_TUNING_FILES),
# each under the name of its target, where SCHEDULE TUNED looks for it.
if (EXISTS "${PROJECT_SOURCE_DIR}/tuning")
    install(DIRECTORY "${PROJECT_SOURCE_DIR}/tuning/" DESTINATION ${CMAKE_INSTALL_DATADIR}/attngen/tuning
            FILES_MATCHING PATTERN "*.json")
endif ()
foreach (file IN LISTS ATTNGEN_TUNING_FILES)
    attngen_read_tuning_database("${file}" attngen_install_json attngen_install_buckets)
    string(JSON attngen_install_target GET "${attngen_install_json}" target)
    install(FILES "${file}" DESTINATION ${CMAKE_INSTALL_DATADIR}/attngen/tuning
            RENAME "${attngen_install_target}.json")
endforeach ()

# What the package's attngen_add_kernel must know about this build. The Halide runtime's targets
# decide which downstream kernels it can serve: a CUDA kernel needs a runtime built with the cuda
# feature (ATTNGEN_RUNTIME_CUDA, or kernels of this build that use CUDA).
# A build with its own CUDA kernels (ATTNGEN_CUDA) has a runtime with CUDA support anyway.
option(ATTNGEN_RUNTIME_CUDA "Build the shared Halide runtime with CUDA support, so that downstream CUDA kernels can use it" ${ATTNGEN_CUDA})
if (ATTNGEN_RUNTIME_CUDA)
    # The runtime's CUDA module loads libcuda when a kernel first uses it: no link dependency.
    list(GET ATTNGEN_TARGETS 0 attngen_install_first_target)
    if (attngen_install_first_target MATCHES "^host")
        set(attngen_install_triple host)
    else ()
        string(REGEX MATCH "^[^-]+-[^-]+-[^-]+" attngen_install_triple
               "${attngen_install_first_target}")
    endif ()
    set_property(TARGET ${attngen_install_halide_runtime} APPEND PROPERTY Halide_RT_TARGETS
                 "${attngen_install_triple}-cuda")
endif ()
get_target_property(attngen_install_rt_targets ${attngen_install_halide_runtime} Halide_RT_TARGETS)
if (attngen_install_rt_targets MATCHES "(^|[-;])cuda([-;]|$)")
    set(ATTNGEN_PACKAGE_RUNTIME_CUDA TRUE)
else ()
    set(ATTNGEN_PACKAGE_RUNTIME_CUDA FALSE)
endif ()
set(ATTNGEN_PACKAGE_TARGETS "${ATTNGEN_TARGETS}")

# The installed package. Paths in the config file are relative to its own location, so that the
# prefix can move.
install(EXPORT attngenTargets NAMESPACE attngen:: DESTINATION ${ATTNGEN_INSTALL_CMAKEDIR})
set(ATTNGEN_TUNING_DIR "${CMAKE_INSTALL_DATADIR}/attngen/tuning")
set(ATTNGEN_MODULE_DIR "${ATTNGEN_INSTALL_CMAKEDIR}")
set(ATTNGEN_DSL_INCLUDE_DIR "${CMAKE_INSTALL_INCLUDEDIR}")
configure_package_config_file(
    ${PROJECT_SOURCE_DIR}/cmake/package/attngenConfig.cmake.in
    ${PROJECT_BINARY_DIR}/package/attngenConfig.cmake
    INSTALL_DESTINATION ${ATTNGEN_INSTALL_CMAKEDIR}
    PATH_VARS ATTNGEN_TUNING_DIR ATTNGEN_MODULE_DIR ATTNGEN_DSL_INCLUDE_DIR)
write_basic_package_version_file(${PROJECT_BINARY_DIR}/attngenConfigVersion.cmake
                                 VERSION ${PROJECT_VERSION} COMPATIBILITY SameMinorVersion)
install(FILES
        ${PROJECT_BINARY_DIR}/package/attngenConfig.cmake
        ${PROJECT_BINARY_DIR}/attngenConfigVersion.cmake
        ${PROJECT_SOURCE_DIR}/cmake/package/AttngenAddKernel.cmake
        ${PROJECT_SOURCE_DIR}/cmake/package/AttngenKernelOptions.cmake
        ${PROJECT_SOURCE_DIR}/cmake/package/AttngenTuningDatabase.cmake
        ${PROJECT_SOURCE_DIR}/cmake/package/AttngenUserModifiers.cmake
        ${PROJECT_SOURCE_DIR}/cmake/package/modifiers_plugin.cpp.in
        ${PROJECT_SOURCE_DIR}/cmake/package/kernel.cpp.in
        ${PROJECT_SOURCE_DIR}/cmake/package/kernel.h.in
        DESTINATION ${ATTNGEN_INSTALL_CMAKEDIR})

# The same package over the build tree (attngen_DIR=<build dir>), with absolute paths into the
# source tree for the tuning databases and attngen_add_kernel.
export(EXPORT attngenTargets NAMESPACE attngen:: FILE ${PROJECT_BINARY_DIR}/attngenTargets.cmake)
set(ATTNGEN_TUNING_DIR "${PROJECT_SOURCE_DIR}/tuning")
set(ATTNGEN_MODULE_DIR "${PROJECT_SOURCE_DIR}/cmake/package")
set(ATTNGEN_DSL_INCLUDE_DIR "${PROJECT_SOURCE_DIR}/generators/dsl")
configure_package_config_file(
    ${PROJECT_SOURCE_DIR}/cmake/package/attngenConfig.cmake.in
    ${PROJECT_BINARY_DIR}/attngenConfig.cmake
    INSTALL_DESTINATION .
    INSTALL_PREFIX ${PROJECT_BINARY_DIR}
    PATH_VARS ATTNGEN_TUNING_DIR ATTNGEN_MODULE_DIR ATTNGEN_DSL_INCLUDE_DIR)
