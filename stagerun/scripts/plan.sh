set -u
results=${MILES_CI_RESULTS:-/results}
mkdir -p "$results"
# miles-ci reads at most 1 MiB of the plan (pipeline's maxPlanBytes): head
# passes one byte more, so a longer plan is known to be over, and then stops
# reading, so a runner that prints without end is cut, never held in memory.
"$@" | head -c 1048577 | tee "$results/plan.txt"
status=("${PIPESTATUS[@]}")
if [ "$(head -c 1048577 "$results/plan.txt" | wc -c)" -gt 1048576 ]; then exit 0; fi
for s in "${status[@]}"; do [ "$s" -eq 0 ] || exit "$s"; done
