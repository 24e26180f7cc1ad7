# Dependencies that a cross build cannot take from the build machine's libraries.
#
# Header-only packages are found on the build machine, but their include directory is
# /usr/include, which must not reach a cross compiler (it would mix the build machine's C
# library headers into the target's). Their headers are copied into the build tree instead.
# GoogleTest is built from the sources that Debian's libgtest-dev ships.

# attngen_header_only(<target> <dir under /usr/include>): an INTERFACE library for headers that
# the build machine has in /usr/include/<dir>.
function(attngen_header_only TARGET DIR)
    if (TARGET ${TARGET})
        return()
    endif ()
    set(copy "${PROJECT_BINARY_DIR}/host_headers")
    file(COPY "/usr/include/${DIR}" DESTINATION "${copy}")
    add_library(${TARGET} INTERFACE IMPORTED GLOBAL)
    set_target_properties(${TARGET} PROPERTIES INTERFACE_INCLUDE_DIRECTORIES "${copy}")
endfunction()

if (CMAKE_CROSSCOMPILING)
    attngen_header_only(CLI11::CLI11 CLI)
endif ()

# Generators run on the build machine: a cross build imports those of a native build through the
# package that add_halide_generator exports there, and a native build may do the same (to compile
# other kernels without building the generators again). Imported here, at the top, so that every
# directory sees them.
if (CMAKE_CROSSCOMPILING OR attngen-halide_generators_ROOT)
    find_package(attngen-halide_generators CONFIG QUIET)
    if (NOT attngen-halide_generators_FOUND)
        message(FATAL_ERROR "Cross-compiling (or attngen-halide_generators_ROOT) needs the "
                "generators of a native build: configure with "
                "-Dattngen-halide_generators_ROOT=<native build dir>/cmake "
                "(see scripts/test-aarch64.sh)")
    endif ()
    # The installed package names the generator executable attngen::generators (its
    # EXPORT_NAME, see AttngenInstall.cmake), so the build tree exports it under that name too;
    # add_halide_library looks for attngen::halide_generators::attngen_generators.
    if (TARGET attngen::halide_generators::generators
        AND NOT TARGET attngen::halide_generators::attngen_generators)
        add_executable(attngen::halide_generators::attngen_generators ALIAS
                       attngen::halide_generators::generators)
    endif ()
endif ()

# GoogleTest for the tests: the installed libraries natively, built from source when
# cross-compiling.
macro(attngen_find_gtest)
    if (CMAKE_CROSSCOMPILING)
        if (NOT TARGET gtest)
            set(INSTALL_GTEST OFF CACHE BOOL "" FORCE)
            add_subdirectory(/usr/src/googletest "${PROJECT_BINARY_DIR}/googletest" EXCLUDE_FROM_ALL)
        endif ()
        foreach (lib IN ITEMS gtest gtest_main gmock gmock_main)
            if (NOT TARGET GTest::${lib})
                add_library(GTest::${lib} ALIAS ${lib})
            endif ()
        endforeach ()
    else ()
        find_package(GTest REQUIRED)
    endif ()
endmacro()
