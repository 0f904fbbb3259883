# Writes OUTPUT (a header defining STARCNN_GIT_COMMIT) from the git commit of SOURCE_DIR, with
# "-dirty" when tracked files differ from it, or "unknown" outside git. Run at every build; the
# file is rewritten only when the text changes, so an unchanged commit recompiles nothing.
execute_process(COMMAND git -C "${SOURCE_DIR}" rev-parse --short=12 HEAD
                OUTPUT_VARIABLE commit OUTPUT_STRIP_TRAILING_WHITESPACE
                RESULT_VARIABLE failed ERROR_QUIET)
if(failed OR commit STREQUAL "")
  set(commit "unknown")
else()
  execute_process(COMMAND git -C "${SOURCE_DIR}" status --porcelain --untracked-files=no
                  OUTPUT_VARIABLE changes ERROR_QUIET)
  if(NOT changes STREQUAL "")
    string(APPEND commit "-dirty")
  endif()
endif()
file(CONFIGURE OUTPUT "${OUTPUT}"
     CONTENT "#pragma once\n#define STARCNN_GIT_COMMIT \"${commit}\"\n" @ONLY)
