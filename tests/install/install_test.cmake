# Installs the build in BUILD_DIR into WORK_DIR/prefix, checks what an installed trnsim offers
# (the tool finds its configs under the prefix, pkg-config describes the libraries), then builds
# EXAMPLE_DIR against the prefix with find_package(trnsim) and runs its program and its plugin.
# Any failure stops the script with a message, which fails the test.

function(run_checked what)
  cmake_parse_arguments(ARG "" "OUTPUT_VARIABLE" "COMMAND" ${ARGN})
  execute_process(COMMAND ${ARG_COMMAND} RESULT_VARIABLE code OUTPUT_VARIABLE out
                  ERROR_VARIABLE err)
  if(NOT code EQUAL 0)
    message(FATAL_ERROR "${what} failed (${code}):\n${out}\n${err}")
  endif()
  message(STATUS "${what}: ok")
  if(ARG_OUTPUT_VARIABLE)
    set(${ARG_OUTPUT_VARIABLE} "${out}" PARENT_SCOPE)
  endif()
endfunction()

function(expect_in text fragment what)
  string(FIND "${text}" "${fragment}" at)
  if(at EQUAL -1)
    message(FATAL_ERROR "${what}: no '${fragment}' in:\n${text}")
  endif()
endfunction()

set(prefix "${WORK_DIR}/prefix")
file(REMOVE_RECURSE "${WORK_DIR}")
run_checked("cmake --install" COMMAND "${CMAKE_COMMAND}" --install "${BUILD_DIR}" --prefix "${prefix}")

foreach(file include/trn/kernel/nl.h include/trn/kernels/plugin.h lib/libtrn_kernel.a
             lib/cmake/trnsim/trnsimConfig.cmake lib/pkgconfig/trnsim.pc
             share/trnsim/configs/chips/trn2.yaml bin/trnsim)
  if(NOT EXISTS "${prefix}/${file}")
    message(FATAL_ERROR "the install has no ${file}")
  endif()
endforeach()

# The installed tool finds the installed configs, not the source tree's.
set(ENV{TRNSIM_CONFIG_DIR} "")
run_checked("installed trnsim spec list" COMMAND "${prefix}/bin/trnsim" spec list
            OUTPUT_VARIABLE chips)
expect_in("${chips}" "${prefix}/share/trnsim/configs/chips" "trnsim spec list")
expect_in("${chips}" "trn2" "trnsim spec list")

# pkg-config describes the libraries from wherever the prefix is.
set(ENV{PKG_CONFIG_PATH} "${prefix}/lib/pkgconfig")
run_checked("pkg-config trnsim" COMMAND pkg-config --cflags --libs trnsim OUTPUT_VARIABLE flags)
expect_in("${flags}" "-ltrn_runtime" "pkg-config --libs trnsim")
expect_in("${flags}" "-std=c++20" "pkg-config --cflags trnsim")

set(example "${WORK_DIR}/example")
run_checked("configure examples/user_kernel"
            COMMAND "${CMAKE_COMMAND}" -S "${EXAMPLE_DIR}" -B "${example}" -G "${GENERATOR}"
                    -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_COMPILER=${CXX_COMPILER}
                    -DCMAKE_PREFIX_PATH=${prefix})
run_checked("build examples/user_kernel" COMMAND "${CMAKE_COMMAND}" --build "${example}")
run_checked("run user_kernel" COMMAND "${example}/user_kernel" OUTPUT_VARIABLE result)
expect_in("${result}" "PASS" "user_kernel")
run_checked("installed trnsim kernels bench --plugin"
            COMMAND "${prefix}/bin/trnsim" kernels bench scaled_relu_linear
                    --plugin "${example}/libmykernels.so" OUTPUT_VARIABLE bench)
expect_in("${bench}" "0 of 64000 outside: PASS" "trnsim kernels bench --plugin")
