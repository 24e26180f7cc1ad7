# ctest's python_install: `cmake --install --component python` into a fresh prefix, then an
# attention call from a Python that sees that prefix only (not the build tree).
file(REMOVE_RECURSE "${PREFIX}")
execute_process(COMMAND ${CMAKE_COMMAND} --install "${BUILD_DIR}" --prefix "${PREFIX}"
                        --component python
                RESULT_VARIABLE result)
if (NOT result EQUAL 0)
    message(FATAL_ERROR "cmake --install failed: ${result}")
endif ()
set(check [=[
import os, sys
sys.path.insert(0, sys.argv[2])
import numpy as np
import attngen
prefix = os.path.realpath(sys.argv[1])
assert os.path.realpath(attngen.__file__).startswith(prefix), attngen.__file__
q = np.ones((1, 1, 2, 8), np.float32)
out = attngen.attention(q, q, q)
assert np.allclose(out, 1.0), out
print("imported", attngen.__file__)
]=])
# -I: neither PYTHONPATH nor the working directory; the check adds the prefix's package dir only.
execute_process(COMMAND ${PYTHON} -I -c "${check}" "${PREFIX}" "${PREFIX}/${PACKAGE_DIR}"
                RESULT_VARIABLE result)
if (NOT result EQUAL 0)
    message(FATAL_ERROR "importing attngen from ${PREFIX}/${PACKAGE_DIR} failed")
endif ()
