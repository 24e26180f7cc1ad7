# The Python package's tests (label python): the pytest suite under python/tests, the example
# encoder layer, and an import from an install prefix. Included from python/CMakeLists.txt.

execute_process(COMMAND ${Python3_EXECUTABLE} -c "import pytest, numpy, torch"
                RESULT_VARIABLE attngen_python_test_deps OUTPUT_QUIET ERROR_QUIET)
if (NOT attngen_python_test_deps EQUAL 0)
    message(STATUS "attngen: ${Python3_EXECUTABLE} lacks pytest, numpy or torch (python3-pytest, python3-numpy, python3-torch); the Python tests are not registered")
    return()
endif ()

set(attngen_python_env "PYTHONPATH=${CMAKE_CURRENT_BINARY_DIR}")
add_test(NAME python_pytest
         COMMAND ${Python3_EXECUTABLE} -m pytest -q -p no:cacheprovider ${CMAKE_CURRENT_SOURCE_DIR}/tests)
add_test(NAME python_encoder_layer
         COMMAND ${Python3_EXECUTABLE} ${PROJECT_SOURCE_DIR}/examples/python/encoder_layer.py)
set_tests_properties(python_pytest python_encoder_layer PROPERTIES
                     LABELS python ENVIRONMENT "${attngen_python_env}")
# Alone: its threads keep both cores busy for seconds, which starved a timing test beside it
# (JitAttention.CandidatesRunOnTheRuntimesThreadPool, whose pool worker must spin 30 ms of a
# 100 ms sleep), and its own check that the GIL is released times a thread against a kernel.
set_tests_properties(python_pytest PROPERTIES RUN_SERIAL TRUE)

# Installs the python component into a fresh prefix and imports the package from there alone.
if (TARGET attngen_generators)
    add_test(NAME python_install
             COMMAND ${CMAKE_COMMAND} -DBUILD_DIR=${PROJECT_BINARY_DIR}
                     -DPREFIX=${CMAKE_CURRENT_BINARY_DIR}/install_test
                     -DPYTHON=${Python3_EXECUTABLE}
                     -DPACKAGE_DIR=${ATTNGEN_PYTHON_INSTALL_DIR}
                     -P ${CMAKE_CURRENT_SOURCE_DIR}/tests/install_test.cmake)
    set_tests_properties(python_install PROPERTIES LABELS python)
endif ()
