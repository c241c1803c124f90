# shellcheck shell=bash
# shellcheck disable=SC2034,SC2154  # log and step_prefix come from the caller, failed goes back to it
# Sourced by scripts/gpu-measure.sh and scripts/gpu-table.sh: `run NAME CMD...` runs CMD with
# its output appended to $log, adds "| NAME | seconds | exit |" to the array `rows`, prints one
# line on stderr (prefixed with $step_prefix) and sets failed=1 when CMD fails; returns CMD's
# exit code. The caller sets log and step_prefix.
failed=0
rows=()

run() {
  local name=$1 t0=$SECONDS rc
  shift
  echo "== $name: $*" >>"$log"
  "$@" >>"$log" 2>&1
  rc=$?
  rows+=("| $name | $((SECONDS - t0)) | $rc |")
  echo "$step_prefix: $name: exit $rc ($((SECONDS - t0)) s)" >&2
  [ "$rc" -eq 0 ] || failed=1
  return "$rc"
}
