package deps

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const validLockJSON = `{
  "release_branch": "release/v0.3.0",
  "sglang_repo": "sgl-project/sglang",
  "sglang_branch": "sglang-miles",
  "sglang_commit": "cb05a44f35d2e1c0b9a8f7e6d5c4b3a29180f7e6",
  "megatron_repo": "radixark/Megatron-LM",
  "megatron_branch": "miles-main",
  "megatron_commit": "37f91617b0a1c2d3e4f5a6b7c8d9e0f1a2b3c4d5",
  "ci_image_tag": "release-v0.3.0-ci",
  "wheels_fingerprint_cu130_x86_64": "3f1c9a0e5b7d2c4e6f8a1b3d5c7e9f0a2b4c6d8e0f1a3b5c7d9e1f2a4b6c8d0e",
  "wheels_fingerprint_cu130_aarch64": "9e8d7c6b5a4f3e2d1c0b9a8f7e6d5c4b3a2f1e0d9c8b7a6f5e4d3c2b1a0f9e8d",
  "wheels_fingerprint_cu129_x86_64": ""
}
`

var validLock = Lock{
	ReleaseBranch:  "release/v0.3.0",
	SGLangRepo:     "sgl-project/sglang",
	SGLangBranch:   "sglang-miles",
	SGLangCommit:   "cb05a44f35d2e1c0b9a8f7e6d5c4b3a29180f7e6",
	MegatronRepo:   "radixark/Megatron-LM",
	MegatronBranch: "miles-main",
	MegatronCommit: "37f91617b0a1c2d3e4f5a6b7c8d9e0f1a2b3c4d5",
	CIImageTag:     "release-v0.3.0-ci",
	WheelsCU130X86: "3f1c9a0e5b7d2c4e6f8a1b3d5c7e9f0a2b4c6d8e0f1a3b5c7d9e1f2a4b6c8d0e",
	WheelsCU130ARM: "9e8d7c6b5a4f3e2d1c0b9a8f7e6d5c4b3a2f1e0d9c8b7a6f5e4d3c2b1a0f9e8d",
}

// withField replaces one line of validLockJSON that starts with `  "key"`.
func withField(key, line string) string {
	var out []string
	for _, l := range strings.Split(validLockJSON, "\n") {
		if strings.HasPrefix(l, `  "`+key+`"`) {
			if line == "" {
				continue
			}
			l = line
		}
		out = append(out, l)
	}
	return strings.Join(out, "\n")
}

func TestParseLock(t *testing.T) {
	const f = "release-lock.json"
	tests := []struct {
		name    string
		data    string
		wantErr string
	}{
		{name: "valid", data: validLockJSON},
		{name: "compact, no newline", data: strings.Join(strings.Fields(validLockJSON), "")},
		{name: "not json", data: "release_branch: x",
			wantErr: f + ": not valid JSON: invalid character 'r' looking for beginning of value; the file must be one JSON object of string fields"},
		{name: "empty", data: "",
			wantErr: f + ": not valid JSON: the file ends too early; the file must be one JSON object of string fields"},
		{name: "array", data: "[]",
			wantErr: f + ": top level is an array, not an object; the file must be one JSON object of string fields"},
		{name: "truncated", data: validLockJSON[:40],
			wantErr: f + ": not valid JSON: the file ends too early; the file must be one JSON object of string fields"},
		{name: "trailing data", data: validLockJSON + "{}",
			wantErr: f + ": not valid JSON: extra data after the object; the file must be one JSON object of string fields"},
		{name: "missing commit", data: withField("sglang_commit", ""),
			wantErr: f + ": field sglang_commit is missing; add it (release-branch-cut.yml writes all 11 fields)"},
		{name: "short commit", data: withField("megatron_commit", `  "megatron_commit": "37f91617b",`),
			wantErr: f + `: field megatron_commit must be a full commit SHA of 40 lowercase hex digits, got "37f91617b"`},
		{name: "upper-case commit", data: withField("sglang_commit", `  "sglang_commit": "CB05A44F35D2E1C0B9A8F7E6D5C4B3A29180F7E6",`),
			wantErr: f + `: field sglang_commit must be a full commit SHA of 40 lowercase hex digits, got "CB05A44F35D2E1C0B9A8F7E6D5C4B3A29180F7E6"`},
		{name: "number commit", data: withField("sglang_commit", `  "sglang_commit": 12,`),
			wantErr: f + ": field sglang_commit must be a JSON string, got a number"},
		{name: "null tag", data: withField("ci_image_tag", `  "ci_image_tag": null,`),
			wantErr: f + ": field ci_image_tag must be a JSON string, got null"},
		{name: "full image name", data: withField("ci_image_tag", `  "ci_image_tag": "radixark/miles:release-v0.3.0-ci",`),
			wantErr: f + `: field ci_image_tag must be a Docker tag, not a full image name, e.g. "release-v0.3.0-ci", got "radixark/miles:release-v0.3.0-ci"`},
		{name: "bad branch", data: withField("release_branch", `  "release_branch": "main",`),
			wantErr: f + `: field release_branch must match release/vX.Y.Z, e.g. "release/v0.3.0", got "main"`},
		{name: "fork repo", data: withField("sglang_repo", `  "sglang_repo": "someone/sglang",`),
			wantErr: f + `: field sglang_repo must be "sgl-project/sglang" (the repository the CI checkouts fetch from), got "someone/sglang"`},
		{name: "bad dependency branch", data: withField("megatron_branch", `  "megatron_branch": "a..b",`),
			wantErr: f + `: field megatron_branch must be a branch name, e.g. "sglang-miles" or "miles-main", got "a..b"`},
		{name: "bad fingerprint", data: withField("wheels_fingerprint_cu129_x86_64", `  "wheels_fingerprint_cu129_x86_64": "abc"`),
			wantErr: f + `: field wheels_fingerprint_cu129_x86_64 must be a sha256 of 64 lowercase hex digits or empty, got "abc"`},
		{name: "duplicate key", data: strings.Replace(validLockJSON, "{", `{"ci_image_tag": "x",`, 1),
			wantErr: f + ": field ci_image_tag appears more than once; keep one"},
		{name: "unknown key", data: strings.Replace(validLockJSON, "{", `{"sglang_comit": "x",`, 1),
			wantErr: f + `: field "sglang_comit" is unknown; remove it or fix its name`},
		{name: "several errors, one per line", data: `{"release_branch": "release/v1.2.3", "sglang_repo": "sgl-project/sglang"}`,
			wantErr: strings.Join([]string{
				f + ": field sglang_branch is missing; add it (release-branch-cut.yml writes all 11 fields)",
				f + ": field sglang_commit is missing; add it (release-branch-cut.yml writes all 11 fields)",
				f + ": field megatron_repo is missing; add it (release-branch-cut.yml writes all 11 fields)",
				f + ": field megatron_branch is missing; add it (release-branch-cut.yml writes all 11 fields)",
				f + ": field megatron_commit is missing; add it (release-branch-cut.yml writes all 11 fields)",
				f + ": field ci_image_tag is missing; add it (release-branch-cut.yml writes all 11 fields)",
				f + ": field wheels_fingerprint_cu130_x86_64 is missing; add it (release-branch-cut.yml writes all 11 fields)",
				f + ": field wheels_fingerprint_cu130_aarch64 is missing; add it (release-branch-cut.yml writes all 11 fields)",
				f + ": field wheels_fingerprint_cu129_x86_64 is missing; add it (release-branch-cut.yml writes all 11 fields)",
			}, "\n")},
		{name: "too big", data: strings.Repeat(" ", maxLockSize+1),
			wantErr: f + ": file is 65537 bytes, more than the 65536 a lockfile can be; regenerate it with the release branch cut"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseLock(f, []byte(tt.data))
			checkErr(t, err, tt.wantErr)
			if tt.wantErr == "" && got != validLock {
				t.Errorf("wanted %+v, got %+v", validLock, got)
			}
		})
	}
}

func TestFormatLockRoundTrip(t *testing.T) {
	data, err := validLock.Format()
	checkErr(t, err, "")
	if string(data) != validLockJSON {
		t.Errorf("wanted %q, got %q", validLockJSON, string(data))
	}
	testdata, err := os.ReadFile(filepath.Join("..", "testdata", "miles-repo", LockFileName))
	checkErr(t, err, "")
	if string(data) != string(testdata) {
		t.Errorf("testdata/miles-repo/release-lock.json drifted from Format: wanted %q, got %q", string(data), string(testdata))
	}
	bad := validLock
	bad.SGLangCommit = "x"
	_, err = bad.Format()
	checkErr(t, err, `release-lock.json: field sglang_commit must be a full commit SHA of 40 lowercase hex digits, got "x"`)
}

func TestNewLockAndWriteRead(t *testing.T) {
	lock, err := NewLock(BranchCut{Branch: "release/v0.3.0", SGLangCommit: validLock.SGLangCommit,
		MegatronCommit: validLock.MegatronCommit, ImageTag: "release-v0.3.0-ci",
		WheelsCU130X86: validLock.WheelsCU130X86, WheelsCU130ARM: validLock.WheelsCU130ARM})
	checkErr(t, err, "")
	if lock != validLock {
		t.Fatalf("wanted %+v, got %+v", validLock, lock)
	}
	dir := milesCheckout(t)
	got, err := ReadLock(dir)
	checkErr(t, err, "")
	if got != nil {
		t.Fatalf("wanted no lock in an empty dir, got %+v", got)
	}
	checkErr(t, WriteLock(dir, lock), "")
	got, err = ReadLock(dir)
	checkErr(t, err, "")
	if got == nil || *got != lock {
		t.Fatalf("wanted %+v, got %+v", lock, got)
	}

	_, err = NewLock(BranchCut{Branch: "release/v0.3"})
	if err == nil || !strings.HasPrefix(err.Error(), `release-lock.json: field release_branch must match release/vX.Y.Z, e.g. "release/v0.3.0", got "release/v0.3"`) {
		t.Errorf("wanted a release_branch error first, got %v", err)
	}
}

// milesCheckout makes an empty Miles checkout: a folder with tests/.
func milesCheckout(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, "tests"), 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

func TestReadLockErrors(t *testing.T) {
	dir := milesCheckout(t)
	path := filepath.Join(dir, LockFileName)
	if err := os.WriteFile(path, []byte("{}"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := ReadLock(dir)
	if err == nil || !strings.HasPrefix(err.Error(), path+": field release_branch is missing") {
		t.Errorf("wanted an error naming %s, got %v", path, err)
	}
	dir2 := milesCheckout(t)
	if err := os.Mkdir(filepath.Join(dir2, LockFileName), 0o755); err != nil {
		t.Fatal(err)
	}
	_, err = ReadLock(dir2)
	checkErr(t, err, filepath.Join(dir2, LockFileName)+": not a regular file; the lockfile must be a plain committed file")
	_, err = ReadLock(filepath.Join(dir2, "missing"))
	checkErr(t, err, filepath.Join(dir2, "missing")+" does not exist: not a Miles checkout; give --repo the folder of a Miles checkout (the one that holds tests/), or run from it")
	_, err = ReadLock(t.TempDir())
	if err == nil || !strings.HasSuffix(err.Error(), " has no tests/ folder: not a Miles checkout; give --repo the folder of a Miles checkout (the one that holds tests/), or run from it") {
		t.Errorf("wanted a folder without tests/ refused, got %v", err)
	}
	// An oversized lockfile reports its real size, not the size read.
	dir3 := milesCheckout(t)
	big := filepath.Join(dir3, LockFileName)
	if err := os.WriteFile(big, make([]byte, 100000), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = ReadLock(dir3)
	checkErr(t, err, big+" is 100000 bytes, more than the 64 KiB (65536 bytes) a lockfile may be; give the release-lock.json a release branch cut writes")
}

func TestReleaseImageTag(t *testing.T) {
	if got, err := ReleaseImageTag("release/v0.3.0"); err != nil || got != "release-v0.3.0-ci" {
		t.Errorf("wanted release-v0.3.0-ci, got %q, %v", got, err)
	}
	for _, b := range []string{"main", "release/", "releases/v1"} {
		if _, err := ReleaseImageTag(b); err == nil {
			t.Errorf("%q: wanted an error", b)
		}
	}
}
