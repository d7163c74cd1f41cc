# The tree of hack/e2e/ci.sh and hack/e2e/hosts.sh (sourced by them; uses $out): testdata/miles's
# workflows and runner with one small passing test per stage shard, in $fxg; the GPU tests print
# the devices they were given. Each sourcing builds the tree anew in $fxg.
# shellcheck shell=bash disable=SC2154 # hack/e2e.sh sets $out, the sourcing script $fxg
rm -rf "$fxg" && cp -r testdata/miles "$fxg" &&
	rm -rf "$fxg/tests/e2e" "$fxg/tests/fast" "$fxg/tests/fast-gpu" "$fxg/tests/test_top_level.py" &&
	find "$fxg/tests/ci" -name 'test_*.py' -delete &&
	mkdir -p "$fxg/tests/fast" "$fxg/tests/e2e/gpu" "$fxg/tests/e2e/amd"
# passing KIND SUITE NAME: a test registered for SUITE that passes (and says which image
# it ran on: a PR image holds /etc/miles-ci-pr-image).
passing() {
	local f
	case $1 in
	cpu)
		f=$fxg/tests/fast/test_$3.py
		printf 'from tests.ci.ci_register import register_cpu_ci\n\nregister_cpu_ci(est_time=5, suite="%s")\n\n\ndef test_ok():\n    pass\n' "$2" >"$f"
		;;
	*)
		f=$fxg/tests/e2e/$([[ $1 == rocm ]] && echo amd || echo gpu)/test_$3.py
		printf 'import os\n\nfrom tests.ci.ci_register import register_%s_ci\n\nregister_%s_ci(est_time=5, suite="%s", labels=[%s])\n\nif __name__ == "__main__":\n    print("pr image:", os.path.exists("/etc/miles-ci-pr-image"))\n    print("visible:", os.environ.get("CUDA_VISIBLE_DEVICES", "-"))\n' "$1" "$1" "$2" "$([[ $1 == rocm ]] && echo "\"amd\", \"megatron\"" || echo "\"megatron\"")" >"$f"
		;;
	esac
}
for i in 0 1 2 3; do passing cpu stage-a-cpu "a$i"; done
passing cpu stage-b-cpu b0
passing cuda stage-b-2-gpu-h200 b2h200
for i in 0 1; do passing cuda stage-c-2-gpu-h200 "c2h200_$i"; done
for i in 0 1 2; do passing cuda stage-c-4-gpu-h200 "c4h200_$i"; done
for i in 0 1; do passing cuda stage-c-8-gpu-h200 "c8h200_$i"; done
passing cuda stage-c-8-gpu-h100 c8h100
for i in 0 1; do passing rocm stage-c-4-gpu-mi350 "mi350_$i"; done
# The PR image job of 31f1ca9's pr-test.yml (rules §12.3), which testdata/miles leaves out,
# with the image job gated on it as Miles' later pr-test.yml does (at 31f1ca9 the image job
# has no `if:`, so its implicit success() covers stage-a-cpu and bypass-fastfail cannot help:
# docs/ci.md), and a stand-in Dockerfile for it.
python3 - "$fxg/.github/workflows/pr-test.yml" <<'PY'
import sys
p = sys.argv[1]
s = open(p).read()
job = """  docker-build:
    needs: [policy, stage-a-cpu]
    if: |
      always() && !cancelled() &&
      needs.policy.result == 'success' &&
      (needs.stage-a-cpu.result == 'success' || needs.policy.outputs.bypass_fastfail == 'true')
    uses: ./.github/workflows/_build-pr-ci-image.yml

  image:
    needs: [policy, docker-build]
    if: always() && !cancelled() && needs.docker-build.result == 'success'
"""
assert s.count("  image:\n    needs: [policy]\n") == 1
open(p, "w").write(s.replace("  image:\n    needs: [policy]\n", job))
PY
printf 'FROM radixark/miles:dev\nRUN echo pr-7 >/etc/miles-ci-pr-image\n' >"$fxg/docker/Dockerfile"
printf 'M\0tests/fast/test_a0.py\0' >"$out/ci-changed"
printf 'M\0docker/Dockerfile\0' >"$out/ci-docker"
