# Helpers shared by every module: warnings, sanitizers, and one-line declarations of a module
# library, a test executable and a benchmark executable.

function(trn_set_warnings target)
  # -ffp-contract=off: no compiler-fused multiply-adds, so every fp32 result is the one the
  # source spells out, identical across compilers and hosts.
  target_compile_options(${target} PRIVATE -Wall -Wextra -Wpedantic -Wshadow -Wnon-virtual-dtor
                                           -ffp-contract=off)
  if(TRN_WERROR)
    target_compile_options(${target} PRIVATE -Werror)
  endif()
endfunction()

function(trn_set_sanitizers target)
  if(TRN_SANITIZE)
    target_compile_options(${target} PRIVATE -fsanitize=${TRN_SANITIZE} -fno-omit-frame-pointer
                                             -fno-sanitize-recover=all)
    target_link_options(${target} PRIVATE -fsanitize=${TRN_SANITIZE})
  endif()
  if(TRN_FUZZ)
    # Coverage feedback for libFuzzer from every library, not only the fuzz target's own file.
    target_compile_options(${target} PRIVATE -fsanitize=fuzzer-no-link)
  endif()
endfunction()

# trn_add_module(<name> SOURCES <files...> DEPS <targets...>)
# Defines the static library trn_<name>, aliased trn::<name>, with public headers in include/.
# `cmake --install` installs it as trnsim::<name> (cmake/TrnInstall.cmake), carrying C++20 and
# the include path to its users.
function(trn_add_module name)
  cmake_parse_arguments(ARG "" "" "SOURCES;DEPS" ${ARGN})
  add_library(trn_${name} STATIC ${ARG_SOURCES})
  add_library(trn::${name} ALIAS trn_${name})
  set_target_properties(trn_${name} PROPERTIES EXPORT_NAME ${name})
  target_include_directories(trn_${name} PUBLIC $<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}/include>
                                                $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>)
  target_compile_features(trn_${name} PUBLIC cxx_std_20)
  target_link_libraries(trn_${name} PUBLIC ${ARG_DEPS})
  set_property(GLOBAL APPEND PROPERTY TRN_MODULES trn_${name})
  trn_set_warnings(trn_${name})
  trn_set_sanitizers(trn_${name})
endfunction()

# trn_add_test(<name> SOURCES <files...> DEPS <targets...> [LABELS <labels...>])
# One GoogleTest executable per module; every test case is registered with ctest.
function(trn_add_test name)
  cmake_parse_arguments(ARG "" "" "SOURCES;DEPS;LABELS" ${ARGN})
  add_executable(${name} ${ARG_SOURCES})
  target_link_libraries(${name} PRIVATE ${ARG_DEPS} GTest::gtest GTest::gtest_main)
  target_compile_definitions(${name} PRIVATE TRN_SOURCE_DIR="${PROJECT_SOURCE_DIR}")
  target_include_directories(${name} PRIVATE ${PROJECT_SOURCE_DIR}/tests/support)
  trn_set_warnings(${name})
  trn_set_sanitizers(${name})
  if(NOT ARG_LABELS)
    set(ARG_LABELS unit)
  endif()
  gtest_discover_tests(${name} PROPERTIES LABELS "${ARG_LABELS}" DISCOVERY_TIMEOUT 60)
endfunction()

# trn_add_bench(<name> SOURCES <files...> DEPS <targets...>)
function(trn_add_bench name)
  cmake_parse_arguments(ARG "" "" "SOURCES;DEPS" ${ARGN})
  add_executable(${name} ${ARG_SOURCES})
  target_link_libraries(${name} PRIVATE ${ARG_DEPS} benchmark::benchmark)
  trn_set_warnings(${name})
endfunction()
