# What `cmake --install` puts under the prefix:
#   bin/      ddtc, ddt-opt and the differential checkers
#   lib/      libddtc, and with MPI libddtc-mpi (the MPI layer) and
#             libddtc-mpi-import (ddtc_type_from_mpi)
#   include/  ddtc/ddtc.h, ddtc/ddtc_mpi.h
#   lib/cmake/ddtc/  the package of find_package(ddtc): ddtc::ddtc, and with
#             MPI ddtc::ddtc-mpi and ddtc::ddtc-mpi-import
#   lib/pkgconfig/   ddtc.pc (and ddtc-mpi.pc with MPI)
# The build-time tools (ddtc-builtin-kernels) and the static compiler
# libraries stay in the build tree.

include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(DDTC_INSTALL_CMAKEDIR ${CMAKE_INSTALL_LIBDIR}/cmake/ddtc)

set(_ddtc_tools ddtc ddt-opt ddt-emu-check)
if(TARGET ddt-mpi-check)
  list(APPEND _ddtc_tools ddt-mpi-check)
endif()
install(TARGETS ${_ddtc_tools} RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})

# The target is called ddtc-runtime (`ddtc` is the compiler); users see
# libddtc.so and ddtc::ddtc.
set_target_properties(ddtc-runtime PROPERTIES EXPORT_NAME ddtc)
install(TARGETS ddtc-runtime EXPORT ddtcTargets
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(FILES ${PROJECT_SOURCE_DIR}/runtime/include/ddtc/ddtc.h
  DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/ddtc)
install(EXPORT ddtcTargets NAMESPACE ddtc::
  DESTINATION ${DDTC_INSTALL_CMAKEDIR})

set(DDTC_HAVE_MPI_LIBRARIES OFF)
if(TARGET ddtc-mpi AND TARGET ddtc-mpi-import)
  set(DDTC_HAVE_MPI_LIBRARIES ON)
  # Both find libddtc (or carry the runtime) next to themselves.
  set_target_properties(ddtc-mpi-import PROPERTIES
    EXPORT_NAME ddtc-mpi-import INSTALL_RPATH "\$ORIGIN")
  set_target_properties(ddtc-mpi PROPERTIES EXPORT_NAME ddtc-mpi)
  install(TARGETS ddtc-mpi ddtc-mpi-import EXPORT ddtcMPITargets
    LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
    INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
  install(FILES ${PROJECT_SOURCE_DIR}/runtime/include/ddtc/ddtc_mpi.h
    DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/ddtc)
  install(EXPORT ddtcMPITargets NAMESPACE ddtc::
    DESTINATION ${DDTC_INSTALL_CMAKEDIR})
endif()

configure_package_config_file(
  ${CMAKE_CURRENT_LIST_DIR}/ddtcConfig.cmake.in
  ${PROJECT_BINARY_DIR}/ddtcConfig.cmake
  INSTALL_DESTINATION ${DDTC_INSTALL_CMAKEDIR})
# 0.x: a minor release may change the API.
write_basic_package_version_file(${PROJECT_BINARY_DIR}/ddtcConfigVersion.cmake
  VERSION ${PROJECT_VERSION} COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/ddtcConfig.cmake
  ${PROJECT_BINARY_DIR}/ddtcConfigVersion.cmake
  DESTINATION ${DDTC_INSTALL_CMAKEDIR})

# The .pc files find the prefix from their own place, so that
# `cmake --install build --prefix P` gives a usable file for any P.
set(_ddtc_pcdir ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
file(RELATIVE_PATH DDTC_PC_TO_PREFIX /prefix/${_ddtc_pcdir} /prefix)
string(REGEX REPLACE "/$" "" DDTC_PC_TO_PREFIX "${DDTC_PC_TO_PREFIX}")
set(_ddtc_pcs ddtc)
if(DDTC_HAVE_MPI_LIBRARIES)
  list(APPEND _ddtc_pcs ddtc-mpi)
endif()
foreach(_pc ${_ddtc_pcs})
  configure_file(${CMAKE_CURRENT_LIST_DIR}/${_pc}.pc.in
    ${PROJECT_BINARY_DIR}/${_pc}.pc @ONLY)
  install(FILES ${PROJECT_BINARY_DIR}/${_pc}.pc DESTINATION ${_ddtc_pcdir})
endforeach()
