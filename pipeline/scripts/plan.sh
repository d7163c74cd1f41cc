set -o pipefail
results=${MILES_CI_RESULTS:-/results}
mkdir -p "$results"
"$@" | tee "$results/plan.txt"
