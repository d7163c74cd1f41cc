set -euo pipefail
req=$1
pins=(nvidia-cudnn-cu13 nvidia-cudnn-cu12)
# pip show exits 1 for a package that is not installed: that is a version of "".
version() { python -m pip show "$1" 2>/dev/null | sed -n 's/^Version: //p' || true; }
declare -A before
for p in "${pins[@]}"; do before[$p]=$(version "$p"); done
python -m pip install -r "$req" --break-system-packages
for p in "${pins[@]}"; do
	now=$(version "$p")
	if [ -n "${before[$p]}" ] && [ "$now" != "${before[$p]}" ]; then
		echo "requirements.txt changed $p from ${before[$p]} to ${now:-nothing}; putting ${before[$p]} back"
		python -m pip install --no-deps --break-system-packages "$p==${before[$p]}"
	fi
done
