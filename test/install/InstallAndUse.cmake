# cmake -DBUILD_DIR=... -DWORK_DIR=... -DEXAMPLE_DIR=... -DVERSION=...
#       -DC_COMPILER=... [-DPKG_CONFIG=...] [-DGENERATOR=...] -P InstallAndUse.cmake
# The steps of test/install/CMakeLists.txt; stops at the first failure.

function(run what)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out
                  ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${what} failed (${rc}):\n${ARGN}\n${out}\n${err}")
  endif()
  set(run_output "${out}" PARENT_SCOPE)
endfunction()

# The type the example prints by default: 62 x 62 doubles.
function(check_example_output what output)
  if(NOT output MATCHES "^ddtc ${VERSION}\n")
    message(FATAL_ERROR "${what} does not report version ${VERSION}:\n${output}")
  endif()
  if(NOT output MATCHES "1 instance\\(s\\) pack into 30752 bytes")
    message(FATAL_ERROR "${what} printed an unexpected layout:\n${output}")
  endif()
  message(STATUS "${what}: ok")
endfunction()

file(REMOVE_RECURSE ${WORK_DIR})
set(prefix ${WORK_DIR}/prefix)

run("cmake --install" ${CMAKE_COMMAND} --install ${BUILD_DIR} --prefix ${prefix})

# Only what the package promises, under the prefix.
foreach(f bin/ddtc include/ddtc/ddtc.h lib/cmake/ddtc/ddtcConfig.cmake
          lib/cmake/ddtc/ddtcConfigVersion.cmake lib/pkgconfig/ddtc.pc)
  if(NOT EXISTS ${prefix}/${f})
    message(FATAL_ERROR "the install lacks ${f}")
  endif()
endforeach()
file(GLOB libddtc ${prefix}/lib*/libddtc.so)
if(NOT libddtc)
  message(FATAL_ERROR "the install lacks libddtc.so")
endif()

run("ddtc --version" ${prefix}/bin/ddtc --version)
if(NOT run_output MATCHES "ddtc ${VERSION}\n")
  message(FATAL_ERROR "ddtc --version does not say ${VERSION}:\n${run_output}")
endif()

# find_package, from a copy of the examples outside the source tree.
set(src ${WORK_DIR}/capi)
file(COPY ${EXAMPLE_DIR}/ DESTINATION ${src})
file(COPY ${EXAMPLE_DIR}/../halo/ DESTINATION ${WORK_DIR}/halo)
set(gen)
if(GENERATOR)
  set(gen -G ${GENERATOR})
endif()
run("configuring the example with find_package(ddtc)" ${CMAKE_COMMAND} ${gen}
    -S ${src} -B ${WORK_DIR}/capi-build -DCMAKE_PREFIX_PATH=${prefix}
    -DCMAKE_C_COMPILER=${C_COMPILER})
run("building the example" ${CMAKE_COMMAND} --build ${WORK_DIR}/capi-build)
run("the example built with find_package" ${WORK_DIR}/capi-build/ddtc-type-info)
check_example_output("find_package(ddtc)" "${run_output}")
# The halo example, built when the CUDA toolkit is there, needs a GPU to
# pass; elsewhere it must start and say so (exit status 77).
set(halo ${WORK_DIR}/capi-build/ddtc-halo-capi)
if(EXISTS ${halo})
  execute_process(COMMAND ${halo} RESULT_VARIABLE rc OUTPUT_VARIABLE out
                  ERROR_VARIABLE err TIMEOUT 120)
  if(NOT rc EQUAL 0 AND NOT rc EQUAL 77)
    message(FATAL_ERROR "ddtc-halo-capi failed (${rc}):\n${out}\n${err}")
  endif()
  message(STATUS "ddtc-halo-capi (find_package): exit status ${rc}")
else()
  message(STATUS "ddtc-halo-capi was not built (no CUDA toolkit)")
endif()

# pkg-config, with the compiler alone.
if(NOT PKG_CONFIG)
  message(STATUS "pkg-config not found: that half is skipped")
  return()
endif()
set(ENV{PKG_CONFIG_PATH} ${prefix}/lib/pkgconfig)
run("pkg-config --modversion ddtc" ${PKG_CONFIG} --modversion ddtc)
string(STRIP "${run_output}" pc_version)
if(NOT pc_version STREQUAL VERSION)
  message(FATAL_ERROR "ddtc.pc says version '${pc_version}', not ${VERSION}")
endif()
run("pkg-config --cflags --libs ddtc" ${PKG_CONFIG} --cflags --libs ddtc)
string(STRIP "${run_output}" flags)
separate_arguments(flags UNIX_COMMAND "${flags}")
run("pkg-config --variable=libdir ddtc" ${PKG_CONFIG} --variable=libdir ddtc)
string(STRIP "${run_output}" libdir)
set(exe ${WORK_DIR}/type-info-pkg-config)
run("compiling the example with pkg-config's flags" ${C_COMPILER} -std=c99
    ${src}/type_info.c -o ${exe} ${flags} -Wl,-rpath,${libdir})
run("the example built with pkg-config" ${exe})
check_example_output("pkg-config ddtc" "${run_output}")
