set -u
kind=$1
if [ "$kind" = amd ]; then rocm_devices; fi
for i in $(seq 1 60); do
	if [ "$kind" = nvidia ] && nvidia-smi -L >/dev/null 2>&1; then
		nvidia-smi --query-gpu=index,name,memory.used --format=csv,noheader
		exit 0
	fi
	if [ "$kind" = amd ] && rocm-smi --showproductname >/dev/null 2>&1; then
		rocm-smi --showproductname
		exit 0
	fi
	echo "waiting for the GPUs ($i/60)"
	sleep 2
done
echo "::error::the GPUs did not answer in 120 s; check the host's driver and that the engine has GPU support (or run with --gpus none)" >&2
exit 1
