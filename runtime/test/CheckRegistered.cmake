# Checks that every test `EXE --list` names is in NAMES (registered with
# ctest), so none is silently left out.
execute_process(COMMAND ${EXE} --list OUTPUT_VARIABLE listed RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "${EXE} --list failed")
endif()
string(REPLACE "\n" ";" listed "${listed}")
foreach(t ${listed})
  list(FIND NAMES "${t}" at)
  if(t AND at EQUAL -1)
    message(FATAL_ERROR "test '${t}' of ${EXE} is not registered with ctest")
  endif()
endforeach()
