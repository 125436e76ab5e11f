# What `cmake --install` puts under the prefix (docs/install.md): the public headers, every
# module's static library with its CMake package (find_package(trnsim) gives trnsim::<module>),
# a pkg-config file, the configs/ the libraries and tools look up chips in, and the trnsim tool
# (tools/trnsim/CMakeLists.txt installs it).
include(CMakePackageConfigHelpers)

set(TRN_INSTALL_CMAKEDIR "${CMAKE_INSTALL_LIBDIR}/cmake/trnsim")

install(DIRECTORY "${PROJECT_SOURCE_DIR}/include/trn" DESTINATION "${CMAKE_INSTALL_INCLUDEDIR}"
        FILES_MATCHING PATTERN "*.h")
install(DIRECTORY "${PROJECT_SOURCE_DIR}/configs/" DESTINATION "${TRN_INSTALL_CONFIG_SUBDIR}")

get_property(TRN_MODULE_TARGETS GLOBAL PROPERTY TRN_MODULES)
install(TARGETS ${TRN_MODULE_TARGETS} EXPORT trnsimTargets
        ARCHIVE DESTINATION "${CMAKE_INSTALL_LIBDIR}")

# For kernel plugins (kernels/plugin.h): the headers and C++20, no libraries, since a plugin
# calls the tile language inside the trnsim executable that loads it.
add_library(trn_plugin INTERFACE)
set_target_properties(trn_plugin PROPERTIES EXPORT_NAME plugin)
target_include_directories(trn_plugin INTERFACE $<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}/include>
                                                $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>)
target_compile_features(trn_plugin INTERFACE cxx_std_20)
target_link_libraries(trn_plugin INTERFACE fmt::fmt nlohmann_json::nlohmann_json)
add_library(trn::plugin ALIAS trn_plugin)
install(TARGETS trn_plugin EXPORT trnsimTargets)

install(EXPORT trnsimTargets NAMESPACE trnsim:: DESTINATION "${TRN_INSTALL_CMAKEDIR}")
configure_package_config_file("${PROJECT_SOURCE_DIR}/cmake/trnsimConfig.cmake.in"
                              "${PROJECT_BINARY_DIR}/trnsimConfig.cmake"
                              INSTALL_DESTINATION "${TRN_INSTALL_CMAKEDIR}"
                              PATH_VARS TRN_INSTALL_CONFIG_SUBDIR CMAKE_INSTALL_BINDIR)
write_basic_package_version_file("${PROJECT_BINARY_DIR}/trnsimConfigVersion.cmake"
                                 COMPATIBILITY SameMinorVersion)
install(FILES "${PROJECT_BINARY_DIR}/trnsimConfig.cmake"
              "${PROJECT_BINARY_DIR}/trnsimConfigVersion.cmake"
        DESTINATION "${TRN_INSTALL_CMAKEDIR}")

# trnsim.pc finds the prefix from its own place, so an install with --prefix stays usable.
file(RELATIVE_PATH TRN_PC_TO_PREFIX "/p/${CMAKE_INSTALL_LIBDIR}/pkgconfig" "/p")
configure_file("${PROJECT_SOURCE_DIR}/cmake/trnsim.pc.in" "${PROJECT_BINARY_DIR}/trnsim.pc" @ONLY)
install(FILES "${PROJECT_BINARY_DIR}/trnsim.pc" DESTINATION "${CMAKE_INSTALL_LIBDIR}/pkgconfig")
