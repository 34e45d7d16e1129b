#!/usr/bin/env bash
# The mutation check of docs/testing.md: each mutant below is one small, plausible bug
# written into the source (a perl substitution of a literal piece of code); with it applied
# alone, the named tests must fail. Prints KILLED or SURVIVED per mutant and exits non-zero
# when one survives, does not build, or no longer applies (its code changed: update the
# list). The source is restored after each mutant, and on exit or Ctrl-C.
#
# Usage: scripts/mutants.sh [NAME...]        (default: every mutant; --list names them)
# Cost: one rebuild of the library and the test binary per mutant, in the `mutants` cargo
# profile (incremental, lightly optimized: Cargo.toml), in target/mutants.
set -euo pipefail
cd "$(dirname "$0")/.."

# name :: file :: perl substitution on the whole file (\Q…\E quotes code) :: test filter
MUTANTS=(
  'lower-path-sign :: src/optimize/constrained/path.rs :: s/\Qlet sign = if side == Side::Max { 1.0 } else { -1.0 };\E/let sign = 1.0;/ :: a_floor_binds_at_an_interior_minimum'
  'lost-dropped :: src/optimize/shooting/segment.rs :: s/\Q-through - lost\E/-through + 0.0 * lost/ :: free_final_time_with_a_running_cost'
  'lost-negated :: src/optimize/shooting/segment.rs :: s/\Q-through - lost\E/-through + lost/ :: free_final_time_with_a_running_cost'
  'final-time-term-everywhere :: src/optimize/shooting/split.rs :: s/\Qout[last][i].terms.push(term.clone());\E/for o in out.iter_mut() { o[i].terms.push(term.clone()); }/ :: shooting::cost_gradient_equals_fd'
  'closing-start-sign :: src/optimize/shooting/nlp.rs :: s/\Qg[i] -= start_jac[(m, j)];\E/g[i] += start_jac[(m, j)];/ :: periodic_walk_closing_rows_equal_fd'
  'closing-event-time :: src/optimize/shooting/segment.rs :: s/\Qjump.forward(&s_minus) + &jump.f_plus * tau.transpose()\E/jump.forward(\&s_minus) + 0.0 * (\&jump.f_plus * tau.transpose())/ :: periodic_walk_closing_rows_equal_fd'
  'monodromy-reversed :: src/optimize/shooting/report.rs :: s/\Q|m, s| &s.end_start * m\E/|m, s| m * \&s.end_start/ :: periodic_lqr_stabilizes_the_gait'
  'bdf-never-lower :: src/integrate/bdf/history.rs :: s/\Q(fac(down, k - 1), k - 1),\E/(0.0 * fac(down, k - 1), k - 1),/ :: bdf_'
  'bdf-order-cap-3 :: src/integrate/bdf/history.rs :: s/\Qself.order = order.clamp(1, MAX_ORDER);\E/self.order = order.clamp(1, 3);/ :: bdf_'
  'bdf-no-hold :: src/integrate/bdf/history.rs :: s/\Qif (1.0..HOLD).contains(&factor) {\E/if false \&\& (1.0..HOLD).contains(\&factor) {/ :: bdf_'
)

if [[ "${1:-}" == "--list" ]]; then
  for m in "${MUTANTS[@]}"; do echo "${m%% :: *}"; done
  exit 0
fi
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-target/mutants}"
backup="$(mktemp -d)"
current=""
restore() { if [[ -n "$current" ]]; then cp "$backup/file" "$current"; current=""; fi; }
trap 'restore; rm -rf "$backup"' EXIT
trap 'restore; exit 130' INT TERM

failed=0
for m in "${MUTANTS[@]}"; do
  name="${m%% :: *}"; rest="${m#* :: }"
  file="${rest%% :: *}"; rest="${rest#* :: }"
  filter="${rest##* :: }"; subst="${rest% :: *}"
  if [[ $# -gt 0 ]] && ! printf '%s\n' "$@" | grep -qx "$name"; then continue; fi
  cp "$file" "$backup/file"
  current="$file"
  perl -0pi -e "$subst" "$file"
  if cmp -s "$file" "$backup/file"; then
    echo "NO LONGER APPLIES  $name ($file): update the list"
    failed=1; restore; continue
  fi
  log="$backup/$name.log"
  if ! cargo test --profile mutants --test suite --no-run >"$log" 2>&1; then
    echo "DOES NOT BUILD     $name (see the substitution)"; tail -5 "$log"
    failed=1; restore; continue
  fi
  if cargo test --profile mutants --test suite -- "$filter" >>"$log" 2>&1; then
    echo "SURVIVED           $name: $filter passed with it"
    failed=1
  else
    echo "KILLED             $name by $(grep -m1 -o 'test [a-z_:]* \.\.\. FAILED' "$log" || echo "$filter")"
  fi
  restore
done
exit $failed
