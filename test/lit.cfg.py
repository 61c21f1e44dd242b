# lit configuration for ddtc's regression tests.

import os

import lit.formats
from lit.llvm import llvm_config
from lit.llvm.subst import ToolSubst

config.name = "DDTC"
config.test_format = lit.formats.ShTest(execute_external=False)
config.suffixes = [".mlir", ".ddt", ".test"]
config.excludes = ["CMakeLists.txt", "lit.cfg.py", "lit.site.cfg.py", "Inputs"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.ddtc_obj_root, "test")

config.substitutions.append(("%PATH%", config.environment["PATH"]))
config.substitutions.append(("%ddtc_build", config.ddtc_obj_root))
llvm_config.with_system_environment(["HOME", "INCLUDE", "LIB", "TMP", "TEMP",
                                     "DDTC_NVRTC_PATH", "CUDA_HOME", "DDTC_CXX"])
llvm_config.use_default_substitutions()

tool_dirs = [config.ddtc_tools_dir, config.llvm_tools_dir]
llvm_config.add_tool_substitutions(["ddtc", "ddt-opt", "ddt-emu-check"],
                                   tool_dirs)

# Tests that compile with NVRTC say `REQUIRES: nvrtc`. ddtc loads NVRTC at run
# time; `ddtc --version` has a line "NVRTC <major>.<minor> (<library>)" when it
# loads.
import re
import subprocess

try:
    _ddtc_version = subprocess.run(
        [os.path.join(config.ddtc_tools_dir, "ddtc"), "--version"],
        capture_output=True, text=True, timeout=120, env=config.environment,
    ).stdout
except (OSError, subprocess.SubprocessError):
    _ddtc_version = ""
if re.search(r"^NVRTC \d+\.\d+ ", _ddtc_version, re.M):
    config.available_features.add("nvrtc")
else:
    lit_config.note("NVRTC not found: tests that REQUIRE nvrtc are unsupported")

# Tests that need MPI say `REQUIRES: mpi`; without MPI they show as
# UNSUPPORTED, never as passed.
if config.mpi_found and config.mpiexec_1:
    config.available_features.add("mpi")
    config.environment["OMPI_ALLOW_RUN_AS_ROOT"] = "1"
    config.environment["OMPI_ALLOW_RUN_AS_ROOT_CONFIRM"] = "1"
    llvm_config.add_tool_substitutions(["ddt-mpi-check"], tool_dirs)
    config.substitutions.append(("%mpirun1", config.mpiexec_1))
else:
    lit_config.note("MPI not found: tests that REQUIRE mpi are unsupported")
