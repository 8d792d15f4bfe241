# Installed package: CMake config (find_package(InfiniRT) -> InfiniRT::infinirt) and infinirt.pc.
include(CMakePackageConfigHelpers)

install(EXPORT InfiniRTTargets
  NAMESPACE InfiniRT::
  DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/InfiniRT)
configure_package_config_file(cmake/InfiniRTConfig.cmake.in
  ${CMAKE_CURRENT_BINARY_DIR}/InfiniRTConfig.cmake
  INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/InfiniRT)
write_basic_package_version_file(${CMAKE_CURRENT_BINARY_DIR}/InfiniRTConfigVersion.cmake
  COMPATIBILITY SameMajorVersion)
install(FILES
  ${CMAKE_CURRENT_BINARY_DIR}/InfiniRTConfig.cmake
  ${CMAKE_CURRENT_BINARY_DIR}/InfiniRTConfigVersion.cmake
  DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/InfiniRT)

# The .pc file locates the prefix relative to itself, so an installed tree can be moved.
file(RELATIVE_PATH INFINIRT_PC_PREFIX_FROM_PCFILEDIR
  "/prefix/${CMAKE_INSTALL_LIBDIR}/pkgconfig" "/prefix")
configure_file(cmake/infinirt.pc.in ${CMAKE_CURRENT_BINARY_DIR}/infinirt.pc @ONLY)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/infinirt.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
configure_file(cmake/infinirt-runtime.pc.in ${CMAKE_CURRENT_BINARY_DIR}/infinirt-runtime.pc @ONLY)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/infinirt-runtime.pc
  DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
configure_file(cmake/infiniop.pc.in ${CMAKE_CURRENT_BINARY_DIR}/infiniop.pc @ONLY)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/infiniop.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
configure_file(cmake/infiniccl.pc.in ${CMAKE_CURRENT_BINARY_DIR}/infiniccl.pc @ONLY)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/infiniccl.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
