# attngen_add_kernel's user-written modifiers (docs/modifiers.md, "Writing a modifier"):
#   SCORE_MOD file.cpp:function   a score modifier, Halide::Expr function(const attngen::ScoreArgs &)
#   MASK_MOD file.cpp:function    a mask modifier, attngen::KeyRule function(const attngen::ModifierArgs &)
#   INPUTS name:type:rank...      the extra input tensors they read (type f32 or i32, rank 1 to 4)
# Each function is a C++ function at global scope in its file, which may include
# attngen/user_modifiers.h and anything else it needs. The files become a plugin that the
# generator loads, so the modifiers are compiled into the kernel ahead of time, for every target
# and schedule, like the built-in ones.

# Checks the options of kernel <P> and sets <P>_SCORE_MOD_FILE, <P>_SCORE_MOD_FUNCTION (and the
# same for MASK_MOD, empty where not given) and <P>_INPUTS_PARAM (the generator's "inputs").
macro(_attngen_user_modifier_options P)
    foreach (_attngen_mod IN ITEMS SCORE_MOD MASK_MOD)
        set(${P}_${_attngen_mod}_FILE "")
        set(${P}_${_attngen_mod}_FUNCTION "")
        if (DEFINED ${P}_${_attngen_mod})
            if (NOT "${${P}_${_attngen_mod}}" MATCHES "^(.+):([A-Za-z_][A-Za-z0-9_]*)$")
                _attngen_kernel_error("${_attngen_name}" "${_attngen_mod} must be "
                                      "file.cpp:function, got '${${P}_${_attngen_mod}}'")
            endif ()
            get_filename_component(${P}_${_attngen_mod}_FILE "${CMAKE_MATCH_1}" ABSOLUTE)
            set(${P}_${_attngen_mod}_FUNCTION "${CMAKE_MATCH_2}")
            if (NOT EXISTS "${${P}_${_attngen_mod}_FILE}")
                _attngen_kernel_error("${_attngen_name}" "${_attngen_mod}: no file "
                                      "${${P}_${_attngen_mod}_FILE}")
            endif ()
            if (NOT ${P}_OP STREQUAL "attention")
                _attngen_kernel_error("${_attngen_name}" "${_attngen_mod} applies to OP attention "
                                      "only")
            endif ()
            if (attngen_OWN_BUILD AND CMAKE_CROSSCOMPILING)
                _attngen_kernel_error("${_attngen_name}" "${_attngen_mod}: a cross build runs "
                                      "another build's generators, which cannot load a plugin of "
                                      "this one")
            endif ()
        endif ()
    endforeach ()
    set(${P}_INPUTS_PARAM "")
    foreach (_attngen_input IN LISTS ${P}_INPUTS)
        if (NOT _attngen_input MATCHES "^[A-Za-z_][A-Za-z0-9_]*:(f32|i32):[1-4]$")
            _attngen_kernel_error("${_attngen_name}" "INPUTS: '${_attngen_input}' is not "
                                  "name:type:rank with type f32 or i32 and rank 1 to 4")
        endif ()
        if (${P}_INPUTS_PARAM)
            string(APPEND ${P}_INPUTS_PARAM "+")
        endif ()
        string(APPEND ${P}_INPUTS_PARAM "${_attngen_input}")
    endforeach ()
    if (${P}_INPUTS AND NOT ${P}_SCORE_MOD_FUNCTION AND NOT ${P}_MASK_MOD_FUNCTION)
        _attngen_kernel_error("${_attngen_name}" "INPUTS are read by user modifiers; give "
                              "SCORE_MOD or MASK_MOD")
    endif ()
endmacro()

# Makes the plugin <NAME>_modifiers of kernel <P>'s modifiers and sets <OUT> to the
# add_halide_library arguments that load it; empty for a kernel without user modifiers.
function(_attngen_user_modifier_plugin OUT NAME P)
    set(${OUT} "" PARENT_SCOPE)
    if (NOT ${P}_SCORE_MOD_FUNCTION AND NOT ${P}_MASK_MOD_FUNCTION)
        return()
    endif ()
    # The modifiers are compiled against the Halide that runs the generators.
    if (NOT TARGET Halide::Halide)
        find_package(Halide 14 REQUIRED)
    endif ()
    # One translation unit includes the files, so that a function of the wrong signature is a
    # compile error here rather than a plugin that fails to load.
    set(MODIFIER_INCLUDES "")
    set(MODIFIER_REGISTRATIONS "")
    foreach (mod IN ITEMS SCORE_MOD MASK_MOD)
        set(file "${${P}_${mod}_FILE}")
        set(function "${${P}_${mod}_FUNCTION}")
        if (NOT function)
            continue()
        endif ()
        if (NOT MODIFIER_INCLUDES MATCHES "\"${file}\"")
            string(APPEND MODIFIER_INCLUDES "#include \"${file}\"\n")
        endif ()
        string(TOLOWER "${mod}" kind)
        string(REPLACE "_mod" "" kind "${kind}")
        string(APPEND MODIFIER_REGISTRATIONS
               "        attngen_register_${kind}_modifier(\"${function}\", &::${function});\n")
    endforeach ()
    set(glue "${CMAKE_CURRENT_BINARY_DIR}/${NAME}_modifiers/${NAME}_modifiers.cpp")
    configure_file("${attngen_MODULE_DIR}/modifiers_plugin.cpp.in" "${glue}" @ONLY)
    add_library(${NAME}_modifiers MODULE "${glue}")
    target_include_directories(${NAME}_modifiers PRIVATE "${attngen_DSL_INCLUDE_DIR}")
    target_link_libraries(${NAME}_modifiers PRIVATE Halide::Halide)
    target_compile_features(${NAME}_modifiers PRIVATE cxx_std_17)
    set(${OUT} PLUGINS ${NAME}_modifiers PARENT_SCOPE)
endfunction()
