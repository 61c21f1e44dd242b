# Checks what a shared library of ddtc exports and needs:
#   cmake -DLIB=path -DEXPORTS=regex -P CheckLibrary.cmake
# Every exported (defined, dynamic) symbol must match EXPORTS, and the only
# libraries needed at load time are libc, libstdc++, libgcc_s, libm, libdl,
# libpthread and the dynamic loader (and ALLOWED, a regex, when given).
foreach(tool readelf nm)
  find_program(DDTC_${tool} ${tool})
  if(NOT DDTC_${tool})
    message(FATAL_ERROR "${tool} not found")
  endif()
endforeach()

execute_process(COMMAND ${DDTC_readelf} -d ${LIB} OUTPUT_VARIABLE dyn
                RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "readelf failed on ${LIB}")
endif()
string(REGEX MATCHALL "Shared library: \\[[^]]*\\]" needed "${dyn}")
set(bad "")
foreach(n ${needed})
  string(REGEX REPLACE "Shared library: \\[(.*)\\]" "\\1" n "${n}")
  message(STATUS "needs ${n}")
  if(NOT n MATCHES "^(libc|libstdc\\+\\+|libgcc_s|libm|libdl|libpthread|ld-linux[-a-z0-9_]*)\\.so" AND
     NOT (DEFINED ALLOWED AND n MATCHES "${ALLOWED}"))
    list(APPEND bad ${n})
  endif()
endforeach()
if(bad)
  message(FATAL_ERROR "${LIB} needs libraries it must not: ${bad}")
endif()

execute_process(COMMAND ${DDTC_nm} -D --defined-only ${LIB}
                OUTPUT_VARIABLE syms RESULT_VARIABLE rc)
string(REPLACE "\n" ";" syms "${syms}")
set(count 0)
foreach(line ${syms})
  if(line MATCHES "^[0-9a-f]+ [A-Za-z] (.*)$")
    set(sym ${CMAKE_MATCH_1})
    math(EXPR count "${count} + 1")
    if(NOT sym MATCHES "${EXPORTS}")
      list(APPEND bad ${sym})
    endif()
  endif()
endforeach()
if(bad)
  message(FATAL_ERROR "${LIB} exports symbols outside its API: ${bad}")
endif()
message(STATUS "${LIB}: ${count} exported symbols, all of the API")
