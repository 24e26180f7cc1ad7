# Reading the tuning databases that `attngen tune` writes (tools/tuner/database.h), for the build
# of attngen (cmake/AttngenTuning.cmake) and for attngen_add_kernel's SCHEDULE TUNED.

# attngen_read_tuning_database(<file> <json var> <bucket count var>): the file's text and its
# number of buckets; stops the configure if it is not a database. The configure runs again when
# the file changes.
function(attngen_read_tuning_database FILE OUT_JSON OUT_COUNT)
    set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS "${FILE}")
    file(READ "${FILE}" json)
    string(JSON format ERROR_VARIABLE err GET "${json}" format)
    if (err OR NOT format STREQUAL "attngen-tuning/1")
        message(FATAL_ERROR "${FILE} is not an attngen tuning database (format attngen-tuning/1)")
    endif ()
    string(JSON count LENGTH "${json}" buckets)
    set(${OUT_JSON} "${json}" PARENT_SCOPE)
    set(${OUT_COUNT} ${count} PARENT_SCOPE)
endfunction()

# attngen_tuning_bucket_params(<json> <bucket index> <var>): the winner's schedule parameters of
# that bucket as a list of name=value.
function(attngen_tuning_bucket_params JSON INDEX OUT)
    string(JSON count LENGTH "${JSON}" buckets ${INDEX} params)
    set(params "")
    if (count GREATER 0)
        math(EXPR last "${count} - 1")
        foreach (p RANGE ${last})
            string(JSON name MEMBER "${JSON}" buckets ${INDEX} params ${p})
            string(JSON value GET "${JSON}" buckets ${INDEX} params ${name})
            list(APPEND params "${name}=${value}")
        endforeach ()
    endif ()
    set(${OUT} "${params}" PARENT_SCOPE)
endfunction()
