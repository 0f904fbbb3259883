# Source this file with bash on the GPU machine: `. bundle/env.sh` (made by scripts/make-bundle).
# It finds the libraries the bundle leaves to the host (host-libs.txt: CUDA runtime, cuBLAS,
# cuSPARSE, nvJitLink, cuDNN) and the NVIDIA driver, puts their folders on LD_LIBRARY_PATH after the
# bundle's lib/, puts bin/ on PATH, and sets STARPU_HOME. It prints what it found on stderr
# (STARCNN_ENV_QUIET=1 silences it) and returns 1 if a library the binaries need is missing.
# STARCNN_ENV_MISSING lists every library it did not find, the driver and cuDNN included.
# STARCNN_CUDA_LIB_DIRS=dir1:dir2 names folders to search first.
# With the bundle's Open MPI (bin/mpirun, lib/openmpi/), it points Open MPI and PMIx at the bundle
# (OPAL_*, PMIX_*: the host has no Open MPI), and lets mpirun run as root.

_starcnn_env_main() {
  local bundle
  bundle=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd) || return 1
  local say=: status=0
  if [[ ${STARCNN_ENV_QUIET:-0} != 1 ]]; then say=_starcnn_env_say; fi

  # Folders to search, best first: the toolkit, the system, then the nvidia-* Python wheels that
  # PyTorch installs (site-packages/nvidia/<name>/lib, e.g. nvidia/cu13/lib and nvidia/cudnn/lib).
  local -a dirs=()
  local d py
  if [[ -n ${STARCNN_CUDA_LIB_DIRS:-} ]]; then
    IFS=: read -r -a dirs <<<"$STARCNN_CUDA_LIB_DIRS"
  fi
  dirs+=(/usr/local/cuda/lib64 /usr/local/cuda/targets/x86_64-linux/lib /usr/local/cuda/lib
    /usr/local/cuda-13*/lib64 /usr/local/cuda-13*/targets/x86_64-linux/lib
    /usr/local/nvidia/lib64 /usr/lib/x86_64-linux-gnu /lib/x86_64-linux-gnu /usr/lib64)
  for py in python3 ${VIRTUAL_ENV:+"$VIRTUAL_ENV/bin/python3"} /opt/*/.venv/bin/python3 \
    /opt/venv/bin/python3 "${HOME:-}"/.venv/bin/python3 /opt/conda/bin/python3; do
    command -v "$py" >/dev/null 2>&1 || continue
    while IFS= read -r d; do dirs+=("$d"); done < <("$py" -c '
import os
try:
    import nvidia
except ImportError:
    raise SystemExit
for p in nvidia.__path__:
    for n in sorted(os.listdir(p)):
        print(os.path.join(p, n, "lib"))' 2>/dev/null)
  done
  dirs+=(/opt/*/.venv/lib/python3*/site-packages/nvidia/*/lib /opt/conda/lib/python3*/site-packages/nvidia/*/lib
    /usr/local/lib/python3*/dist-packages/nvidia/*/lib /usr/lib/python3/dist-packages/nvidia/*/lib
    "${HOME:-}"/.local/lib/python3*/site-packages/nvidia/*/lib)

  # Needed libraries, then wanted ones: the driver, and cuDNN (whose sub-libraries it loads itself).
  local -a needed=() wanted=(libcuda.so.1 libcudnn.so.9)
  if [[ -f $bundle/host-libs.txt ]]; then mapfile -t needed <"$bundle/host-libs.txt"; fi

  local -a path_dirs=()
  local lib found missing=
  for lib in "${needed[@]}" "${wanted[@]}"; do
    found=
    for d in "${dirs[@]}"; do
      if [[ -e $d/$lib ]]; then
        found=$(realpath "$d")
        break
      fi
    done
    if [[ -z $found && -n $(/sbin/ldconfig -p 2>/dev/null | awk -v l="$lib" '$1 == l') ]]; then
      $say "$lib -> the loader's cache (ldconfig -p)"
      continue
    fi
    if [[ -z $found ]]; then
      missing+=" $lib"
      if [[ " ${needed[*]} " == *" $lib "* ]]; then
        $say "MISSING $lib (needed by the binaries; set STARCNN_CUDA_LIB_DIRS)"
        status=1
      else
        $say "missing $lib"
      fi
      continue
    fi
    $say "$lib -> $found"
    # System folders stay off LD_LIBRARY_PATH (the loader searches them anyway): there they would
    # take precedence over the bundle's RUNPATH for libraries the bundle carries.
    case $found in /usr/lib/x86_64-linux-gnu | /lib/x86_64-linux-gnu | /usr/lib64 | /lib64) continue ;; esac
    if [[ " ${path_dirs[*]} " != *" $found "* ]]; then path_dirs+=("$found"); fi
  done

  # Bundle first, then the host's CUDA folders, then whatever the caller had.
  local new_path=$bundle/lib
  for d in "${path_dirs[@]}"; do new_path+=:$d; done
  local -a old=()
  IFS=: read -r -a old <<<"${LD_LIBRARY_PATH:-}"
  for d in "${old[@]}"; do
    if [[ -n $d && ":$new_path:" != *":$d:"* ]]; then new_path+=:$d; fi
  done
  export LD_LIBRARY_PATH=$new_path
  if [[ ":$PATH:" != *":$bundle/bin:"* ]]; then export PATH=$bundle/bin:$PATH; fi

  # StarPU keeps perf models and bus calibration here.
  if [[ -z ${STARPU_HOME:-} ]]; then
    if [[ -w $bundle ]]; then
      STARPU_HOME=$bundle/starpu-home
    else
      STARPU_HOME=${TMPDIR:-/tmp}/starcnn-starpu-home
    fi
  fi
  export STARPU_HOME
  mkdir -p "$STARPU_HOME"
  # Our own hwloc plugins, never the host's (of another hwloc version).
  if [[ -d $bundle/lib/hwloc ]]; then export HWLOC_PLUGINS_PATH=$bundle/lib/hwloc; fi
  if [[ -x $bundle/bin/mpirun && -d $bundle/lib/openmpi ]]; then _starcnn_env_mpi "$bundle"; fi
  export STARCNN_BUNDLE=$bundle
  export STARCNN_ENV_MISSING=${missing# }

  $say "LD_LIBRARY_PATH=$LD_LIBRARY_PATH"
  $say "STARPU_HOME=$STARPU_HOME"
  return $status
}

# Open MPI relocated to the bundle: every folder it was built with, since Debian's are not all under
# its prefix (plugins in lib/x86_64-linux-gnu/openmpi/lib/openmpi3); PMIx likewise.
_starcnn_env_mpi() {
  local b=$1
  export OPAL_PREFIX=$b OPAL_EXEC_PREFIX=$b OPAL_BINDIR=$b/bin OPAL_SBINDIR=$b/bin OPAL_LIBEXECDIR=$b/bin \
    OPAL_LIBDIR=$b/lib OPAL_PKGLIBDIR=$b/lib/openmpi OPAL_DATAROOTDIR=$b/share OPAL_DATADIR=$b/share \
    OPAL_PKGDATADIR=$b/share/openmpi OPAL_SYSCONFDIR=$b/etc
  if [[ -d $b/lib/pmix ]]; then
    export PMIX_PREFIX=$b PMIX_EXEC_PREFIX=$b PMIX_LIBDIR=$b/lib PMIX_PKGLIBDIR=$b/lib/pmix \
      PMIX_DATADIR=$b/share PMIX_PKGDATADIR=$b/share/pmix PMIX_SYSCONFDIR=$b/etc \
      PMIX_MCA_mca_base_component_path=$b/lib/pmix
  fi
  $say "mpirun -> $b/bin/mpirun (OPAL_PREFIX=$b)"
  # The GPU machine runs as root and may have no ssh: one host needs neither (set them to override).
  export OMPI_ALLOW_RUN_AS_ROOT=${OMPI_ALLOW_RUN_AS_ROOT-1} OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=${OMPI_ALLOW_RUN_AS_ROOT_CONFIRM-1}
  # Without ssh or rsh, an empty agent makes mpirun start the ranks itself instead of refusing.
  local agent p
  if [[ -z ${OMPI_MCA_plm_rsh_agent+set} ]]; then
    for agent in ssh rsh; do
      p=$(type -P "$agent") && [[ -f $p ]] && return 0
    done
    export OMPI_MCA_plm_rsh_agent=
  fi
}

# shellcheck disable=SC2317 # called through $say
_starcnn_env_say() { echo "starcnn env: $*" >&2; }

_starcnn_env_main
_starcnn_env_status=$?
unset -f _starcnn_env_main _starcnn_env_say _starcnn_env_mpi
# Sourced: return the status; run as a program by mistake: exit with it.
# shellcheck disable=SC2317
return "$_starcnn_env_status" 2>/dev/null || exit "$_starcnn_env_status"
