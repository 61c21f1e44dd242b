# Debian's static MLIR archives list the LLVM shared library (target `LLVM`) as
# an interface dependency. Replace it with the static LLVM components so ddtc's
# library and tools load with nothing but libc and libstdc++ (the GPU machine has
# no LLVM installed).
set(DDTC_LLVM_STATIC_COMPONENTS
    LLVMSupport LLVMDemangle LLVMRemarks LLVMBitstreamReader LLVMTargetParser)

function(ddtc_replace_llvm_dylib target)
  get_target_property(libs ${target} INTERFACE_LINK_LIBRARIES)
  if(NOT libs)
    return()
  endif()
  list(FIND libs LLVM idx)
  if(idx EQUAL -1)
    return()
  endif()
  list(REMOVE_ITEM libs LLVM)
  list(APPEND libs ${DDTC_LLVM_STATIC_COMPONENTS})
  set_target_properties(${target} PROPERTIES INTERFACE_LINK_LIBRARIES "${libs}")
endfunction()

# Walk every target MLIR and LLVM export.
foreach(t ${MLIR_EXPORTED_TARGETS} ${LLVM_EXPORTED_TARGETS})
  if(TARGET ${t})
    ddtc_replace_llvm_dylib(${t})
  endif()
endforeach()

# LLVMSupport names libz3, zlib and zstd as shared libraries; ddtc uses none of
# the features that need them, and linking them would tie the tools to them.
if(TARGET LLVMSupport)
  set_target_properties(LLVMSupport PROPERTIES
    INTERFACE_LINK_LIBRARIES "rt;dl;m;pthread;LLVMDemangle")
endif()

# Never link the LLVM dylib through add_llvm_executable either.
set(LLVM_LINK_LLVM_DYLIB OFF)
