#!/usr/bin/env bash
# Run the tests under each instruction set this CPU can force, one pytest run per setting, and say which pass.
#
#   bash tests/run_under_each_isa.sh                      # the default suite under each setting
#   bash tests/run_under_each_isa.sh tests/inference/test_crimson.py -k released_model   # any pytest arguments
#   ISA_SETTINGS="avx2 amd-avx512-bf16" bash tests/run_under_each_isa.sh ...             # some settings only
#
# Float kernels differ by vendor and instruction set: ATen's vectorised kernels (ATEN_CPU_CAPABILITY), MKL's
# (MKL_ENABLE_INSTRUCTIONS) and oneDNN's, which run the bf16 matrix multiplies (ONEDNN_MAX_CPU_ISA, names as in
# oneDNN's dnnl_cpu_isa_t). Each setting below stands for a kind of x86-64 CPU; one is skipped when this CPU lacks
# its instructions. ATen below AVX-512 is always paired with oneDNN below AMX: torch 2.13's bf16 attention packs for
# AMX whenever oneDNN reports it and then fails under ATen's AVX2 kernels ("pack_vnni2 is only supported when avx512
# is supported"), a pairing no real CPU has. `aten-default` (no AVX2: x86-64 CPUs before 2013 and some low-power
# ones) runs only when named: there torch.randn itself draws other float32 values (its AVX2 path is vectorised), so
# the parity look-alikes are other models and their tests refuse them by digest. Exit status: 0 when every setting
# run passes.
set -uo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
flags="$(grep -m1 '^flags' /proc/cpuinfo)"
has() { [[ " $flags " == *" $1 "* ]]; }

declare -A SETTING=(
  [native]=""
  [aten-default]="ATEN_CPU_CAPABILITY=default ONEDNN_MAX_CPU_ISA=AVX2 MKL_ENABLE_INSTRUCTIONS=AVX2"
  [avx2]="ATEN_CPU_CAPABILITY=avx2 ONEDNN_MAX_CPU_ISA=AVX2 MKL_ENABLE_INSTRUCTIONS=AVX2"
  [avx512]="ATEN_CPU_CAPABILITY=avx512 ONEDNN_MAX_CPU_ISA=AVX512_CORE MKL_ENABLE_INSTRUCTIONS=AVX512"
  [amd-avx512-bf16]="ATEN_CPU_CAPABILITY=avx512 ONEDNN_MAX_CPU_ISA=AVX512_CORE_BF16 MKL_ENABLE_INSTRUCTIONS=AVX2"
  [avx512-bf16]="ATEN_CPU_CAPABILITY=avx512 ONEDNN_MAX_CPU_ISA=AVX512_CORE_BF16 MKL_ENABLE_INSTRUCTIONS=AVX512"
  [amx]="ATEN_CPU_CAPABILITY=avx512 ONEDNN_MAX_CPU_ISA=AVX512_CORE_AMX MKL_ENABLE_INSTRUCTIONS=AVX512"
)
declare -A NEEDS=(
  [native]="" [aten-default]="avx2" [avx2]="avx2" [avx512]="avx512f avx512bw avx512vl avx512dq"
  [amd-avx512-bf16]="avx512f avx512_bf16" [avx512-bf16]="avx512f avx512_bf16" [amx]="avx512f amx_bf16 amx_tile"
)
ORDER=(native avx2 avx512 amd-avx512-bf16 avx512-bf16 amx)

failed=0
summary=()
for name in ${ISA_SETTINGS:-${ORDER[@]}}; do
  if [[ -z "${SETTING[$name]+x}" ]]; then
    echo "unknown setting $name: expected one of ${ORDER[*]} aten-default" >&2
    exit 2
  fi
  missing=""
  for flag in ${NEEDS[$name]}; do has "$flag" || missing+=" $flag"; done
  if [[ -n "$missing" ]]; then
    summary+=("$name: skipped (this CPU lacks$missing)")
    continue
  fi
  echo "=== $name: ${SETTING[$name]:-(nothing forced)}"
  # env -u: a setting that forces nothing must not inherit a value from the caller's shell either.
  if env -u ATEN_CPU_CAPABILITY -u MKL_ENABLE_INSTRUCTIONS -u ONEDNN_MAX_CPU_ISA ${SETTING[$name]} \
    bash "$root/.ci/env" pytest "$@"; then
    summary+=("$name: passed")
  else
    summary+=("$name: FAILED (${SETTING[$name]})")
    failed=1
  fi
done
echo "=== per instruction set"
printf '%s\n' "${summary[@]}"
exit "$failed"
