# Reading the tuning databases that `attngen tune` writes (tools/tuner/database.h), for the build
# of attngen (cmake/AttngenTuning.cmake) and for attngen_add_kernel's SCHEDULE TUNED. Each bucket
# holds the variant of its winning kernel (bucket and winner in one spec) and whether it beat the
# default build's kernel.

# attngen_read_tuning_database(<file> <json var> <bucket count var>): the file's text and its
# number of buckets; stops the configure if it is not a database. The configure runs again when
# the file changes.
function(attngen_read_tuning_database FILE OUT_JSON OUT_COUNT)
    set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS "${FILE}")
    file(READ "${FILE}" json)
    string(JSON format ERROR_VARIABLE err GET "${json}" format)
    if (err OR NOT format STREQUAL "attngen-tuning/2")
        message(FATAL_ERROR "${FILE} is not an attngen tuning database (format attngen-tuning/2)")
    endif ()
    string(JSON count LENGTH "${json}" buckets)
    set(${OUT_JSON} "${json}" PARENT_SCOPE)
    set(${OUT_COUNT} ${count} PARENT_SCOPE)
endfunction()

# attngen_variant_value(<spec> <key> <var>): the value of one key of a variant spec, or "".
function(attngen_variant_value SPEC KEY OUT)
    set(value "")
    if ("${SPEC}" MATCHES "(^|,)${KEY}:([^,]*)")
        set(value "${CMAKE_MATCH_2}")
    endif ()
    set(${OUT} "${value}" PARENT_SCOPE)
endfunction()

# attngen_find_tuning_bucket(<file> <storage> <kv storage> <mask> <d_k> <d_v> <index var>
# <json var>): the improving bucket of an attention kernel with these storage types and this mask
# for any number of queries and keys, of exactly these head dims, else the generic one (head dims
# 0: read at run time); "" if there is none.
function(attngen_find_tuning_bucket FILE STORAGE KV_STORAGE MASK D_K D_V OUT_INDEX OUT_JSON)
    attngen_read_tuning_database("${FILE}" json count)
    set(${OUT_JSON} "${json}" PARENT_SCOPE)
    set(${OUT_INDEX} "" PARENT_SCOPE)
    if (count EQUAL 0)
        return()
    endif ()
    math(EXPR last "${count} - 1")
    foreach (want IN ITEMS "${D_K};${D_V}" "0;0")
        list(GET want 0 want_d_k)
        list(GET want 1 want_d_v)
        foreach (i RANGE ${last})
            string(JSON improves GET "${json}" buckets ${i} improves)
            string(JSON spec GET "${json}" buckets ${i} variant)
            foreach (key IN ITEMS op storage kv_storage mask d_k d_v max_queries min_keys)
                attngen_variant_value("${spec}" ${key} ${key})
            endforeach ()
            # A spec without storage types is float32's; k and v have q's unless it names another.
            if (storage STREQUAL "")
                set(storage f32)
            endif ()
            if (kv_storage STREQUAL "")
                set(kv_storage ${storage})
            endif ()
            foreach (key IN ITEMS d_k d_v)
                if ("${${key}}" STREQUAL "")
                    set(${key} 0)
                endif ()
            endforeach ()
            if (improves AND op STREQUAL "attention" AND storage STREQUAL STORAGE
                AND kv_storage STREQUAL KV_STORAGE AND mask STREQUAL MASK AND max_queries STREQUAL ""
                AND min_keys STREQUAL "" AND d_k EQUAL want_d_k AND d_v EQUAL want_d_v)
                set(${OUT_INDEX} ${i} PARENT_SCOPE)
                return()
            endif ()
        endforeach ()
    endforeach ()
endfunction()
