rocm_devices() {
	local d n ma mi
	if [ -r /sys/class/kfd/kfd/dev ] && [ ! -e /dev/kfd ]; then
		IFS=: read -r ma mi </sys/class/kfd/kfd/dev
		mknod -m 666 /dev/kfd c "$ma" "$mi"
	fi
	mkdir -p /dev/dri
	for d in /sys/class/drm/card* /sys/class/drm/renderD*; do
		[ -r "$d/dev" ] || continue
		n=/dev/dri/${d##*/}
		[ -e "$n" ] && continue
		IFS=: read -r ma mi <"$d/dev"
		mknod -m 666 "$n" c "$ma" "$mi"
	done
}
