package hostlock

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/radixark/miles-ci/device"
)

func set(t *testing.T, s string) device.Set {
	t.Helper()
	ids, err := device.ParseSet(s)
	if err != nil {
		t.Fatal(err)
	}
	return ids
}

// TestOneDeviceOneFile: --visible-devices 00,01 and 0,1 are the same
// devices, so the second lease waits for the first (issue 38 item 7); a
// lease that names a device twice is refused, where it would wait on
// itself for ever.
func TestOneDeviceOneFile(t *testing.T) {
	dir := t.TempDir()
	a, b := &Lock{Dir: dir, Who: "a"}, &Lock{Dir: dir, Who: "b"}
	h := host(t, "h200:0-7")
	release, _, ok, err := a.TryLease(h, set(t, "00,01"))
	if !ok || err != nil {
		t.Fatalf("wanted the lease of 00,01, got ok=%v %v", ok, err)
	}
	defer release()
	if _, held, ok, err := b.TryLease(h, set(t, "1,2")); ok || err != nil || held.Devices.String() != "1" || !strings.Contains(held.By, "(a)") {
		t.Errorf("wanted device 1 held by a, got ok=%v %+v %v", ok, held, err)
	}
	if _, _, ok, err := b.TryLease(h, device.Set{"3", "3"}); ok || err == nil || err.Error() != "a lease of GPUs 3,3: device 3 is named twice" {
		t.Errorf("wanted a lease of one device twice refused, got ok=%v %v", ok, err)
	}
}

// TestSplitHostsNeverSerialise: two hosts that split one machine
// (h200:0-3 and h200:4-7, two runs or two hosts of a fleet) each lease all
// of their devices at once; the host-wide file is each host's own, and one
// that waits names the holder of its own host.
func TestSplitHostsNeverSerialise(t *testing.T) {
	dir := t.TempDir()
	a, b := &Lock{Dir: dir, Who: "run a", Now: at("10:00:00")}, &Lock{Dir: dir, Who: "run b"}
	lo, hi := host(t, "h200:0-3"), host(t, "h200:4-7")
	releaseLo, _, ok, err := a.TryLease(lo, set(t, "0-3"))
	if !ok || err != nil {
		t.Fatalf("wanted host 0-3 whole, got ok=%v %v", ok, err)
	}
	defer releaseLo()
	releaseHi, _, ok, err := b.TryLease(hi, set(t, "4-7"))
	if !ok || err != nil {
		t.Fatalf("wanted host 4-7 whole beside host 0-3, got ok=%v %v", ok, err)
	}
	releaseHi()
	_, held, ok, _ := b.TryLease(lo, set(t, "2"))
	if ok || held.By != "pid "+strconv.Itoa(os.Getpid())+" (run a) since 10:00:00" {
		t.Errorf("wanted device 2 held by run a, got ok=%v %+v", ok, held)
	}
	// A host of the whole machine meets them on the device files.
	_, held, ok, _ = b.TryLease(host(t, "h200:0-7"), set(t, "3,4"))
	if ok || held.Devices.String() != "3" {
		t.Errorf("wanted device 3 held on the whole machine's host, got ok=%v %+v", ok, held)
	}
	for _, f := range []string{HostFile(set(t, "0-3")), HostFile(set(t, "4-7")), DeviceFile("0")} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Errorf("wanted %s, got %v", f, err)
		}
	}
	if HostFile(set(t, "7,6,5,4")) != "host-4-7.lock" || HostFile(nil) != "host.lock" {
		t.Errorf("wanted host-4-7.lock and host.lock, got %s and %s", HostFile(set(t, "7,6,5,4")), HostFile(nil))
	}
}

// TestStandInsApart: stand-in devices (--gpus none:0-3) take lock files of
// their own, so a stand-in run never blocks a real one on this machine's
// GPU 0; two fleet hosts of stand-ins are apart from each other, and two
// runs of one stand-in host still meet.
func TestStandInsApart(t *testing.T) {
	dir := t.TempDir()
	l := &Lock{Dir: dir, Who: "x"}
	var releases []func()
	defer func() {
		for _, r := range releases {
			r()
		}
	}()
	for _, tc := range []struct {
		name string
		h    string
	}{{"stand-ins", "none:0-3"}, {"this machine's GPUs", "h200:0-3"}} {
		r, _, ok, err := l.TryLease(host(t, tc.h), set(t, "0"))
		if !ok || err != nil {
			t.Fatalf("%s: wanted device 0, got ok=%v %v", tc.name, ok, err)
		}
		releases = append(releases, r)
	}
	for _, h := range []struct {
		h    string
		name string
	}{{"none:h200:0-7", "h200-a"}, {"none:mi350:0-3", "mi350-b"}} {
		hh := host(t, h.h)
		hh.Name = h.name
		r, _, ok, err := l.TryLease(hh, set(t, "0-3"))
		if !ok || err != nil {
			t.Fatalf("host %s: wanted devices 0-3 beside the other stand-in host, got ok=%v %v", h.name, ok, err)
		}
		releases = append(releases, r)
	}
	if _, _, ok, _ := (&Lock{Dir: dir}).TryLease(host(t, "none:0-3"), set(t, "0")); ok {
		t.Error("wanted two runs of one stand-in host to meet on its device 0")
	}
	for _, f := range []string{"standin-gpu-0.lock", "gpu-0.lock", "standin-h200-a-gpu-0.lock", "standin-mi350-b-host-0-3.lock"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Errorf("wanted %s, got %v", f, err)
		}
	}
}

// TestLockFolderModes: a lock folder other users may write is trusted only
// with the sticky bit (else another user removes a held lock file and a
// second lease of its device succeeds: issue 38 item 8); a private one is
// this user's alone; a symbolic link is refused.
func TestLockFolderModes(t *testing.T) {
	tests := []struct {
		name string
		mode os.FileMode
		err  string
	}{
		{"sticky and open to all", 0o777 | os.ModeSticky, ""},
		{"private", 0o700, ""},
		{"private, others may read", 0o755, ""},
		{"open to all without the sticky bit", 0o777, "may be written by other users but has no sticky bit (mode 0777), so another user could remove a held lock file and lease its GPU again; make it sticky (chmod 1777 "},
		{"group-writable without the sticky bit", 0o770, "may be written by other users but has no sticky bit (mode 0770)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "gpus")
			if err := os.Mkdir(dir, 0o700); err != nil {
				t.Fatal(err)
			}
			if err := os.Chmod(dir, tt.mode); err != nil {
				t.Fatal(err)
			}
			release, _, ok, err := (&Lock{Dir: dir}).TryLease(host(t, "0-1"), device.Set{"0"})
			if tt.err == "" {
				if !ok || err != nil {
					t.Fatalf("wanted the lease, got ok=%v %v", ok, err)
				}
				release()
				return
			}
			if ok || err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("wanted %q, got ok=%v %v", tt.err, ok, err)
			}
		})
	}
	real := t.TempDir()
	link := filepath.Join(t.TempDir(), "gpus")
	os.Symlink(real, link)
	if _, _, _, err := (&Lock{Dir: link}).TryLease(host(t, "0-1"), device.Set{"0"}); err == nil || !strings.Contains(err.Error(), "is a symbolic link") {
		t.Errorf("wanted a symlinked lock folder refused, got %v", err)
	}
}

// TestPlantedLockFiles: a FIFO, a folder or a symbolic link planted as a
// lock file is refused at once, naming it (a FIFO made the lease hang, a
// folder made every shard not-run with an unclear error).
func TestPlantedLockFiles(t *testing.T) {
	plant := map[string]func(path string) error{
		"a FIFO":          func(p string) error { return syscall.Mkfifo(p, 0o600) },
		"a folder":        func(p string) error { return os.Mkdir(p, 0o700) },
		"a symbolic link": func(p string) error { return os.Symlink("/etc/passwd", p) },
		"a dangling link": func(p string) error { return os.Symlink("/nonexistent", p) },
		"a FIFO (host)": func(p string) error {
			return syscall.Mkfifo(filepath.Join(filepath.Dir(p), HostFile(set(t, "0-1"))), 0o600)
		},
		"a folder (host 2)": func(p string) error { return os.Mkdir(filepath.Join(filepath.Dir(p), HostFile(set(t, "0-1"))), 0o700) },
	}
	for name, planted := range plant {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			if err := planted(filepath.Join(dir, DeviceFile("0"))); err != nil {
				t.Fatal(err)
			}
			done := inBackground(func() error {
				_, _, _, err := (&Lock{Dir: dir}).TryLease(host(t, "0-1"), device.Set{"0"})
				return err
			})
			select {
			case err := <-done:
				kind := map[string]string{"a FIFO": "a named pipe (FIFO)", "a folder": "a folder", "a symbolic link": "a symbolic link", "a dangling link": "a symbolic link",
					"a FIFO (host)": "a named pipe (FIFO)", "a folder (host 2)": "a folder"}[name]
				if err == nil || !strings.Contains(err.Error(), " is "+kind+", not a regular file as a lock file miles-ci makes is; remove it (rm -r ") {
					t.Errorf("wanted %s refused, got %v", kind, err)
				}
			case <-time.After(5 * time.Second):
				t.Fatal("the lease hangs on the planted file")
			}
		})
	}
}

// inBackground runs f in a goroutine: its error comes on the channel.
func inBackground(f func() error) <-chan error {
	c := make(chan error, 1)
	go func() { c <- f() }()
	return c
}

// asNobody runs this test binary's test run as the user nobody (this
// process must be root), with env; it returns what the run printed.
func asNobody(t *testing.T, run string, env ...string) (string, error) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root to run a lease as another user")
	}
	bin, err := os.MkdirTemp("", "hostlock-nobody")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(bin) })
	os.Chmod(bin, 0o755)
	exe := filepath.Join(bin, "hostlock.test")
	data, err := os.ReadFile(os.Args[0])
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(exe, data, 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, "-test.run="+run+"$", "-test.count=1")
	cmd.Env = append([]string{"PATH=/usr/bin:/bin", "HOME=/"}, env...)
	cmd.Dir = bin
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// TestAnotherUsersLeases replays issue 38 item 8 with two users: in a
// shared sticky folder, another user's lease of a device waits for ours
// and cannot remove our lock file; a folder of another user that is not
// open to all is refused with the fix; and a read-only folder is reported
// as read-only, not as "no such file".
func TestAnotherUsersLeases(t *testing.T) {
	if dir := os.Getenv("HOSTLOCK_NOBODY"); dir != "" {
		l := &Lock{Dir: filepath.Join(dir, os.Getenv("HOSTLOCK_SUB")), Who: "nobody"}
		os.Remove(filepath.Join(dir, "shared", DeviceFile("0")))
		_, held, ok, err := l.TryLease(host(t, "h200:0-3"), device.Set{"0"})
		switch {
		case err != nil:
			os.Stdout.WriteString("error: " + err.Error() + "\n")
		case ok:
			os.Stdout.WriteString("leased\n")
		default:
			os.Stdout.WriteString("held by " + held.By + "\n")
		}
		return
	}
	if os.Geteuid() != 0 {
		t.Skip("needs root to run a lease as another user")
	}
	top, err := os.MkdirTemp("", "hostlock-users")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(top) })
	os.Chmod(top, 0o755)
	shared := filepath.Join(top, "shared")
	l := &Lock{Dir: shared, Who: "root's run"}
	release, _, ok, err := l.TryLease(host(t, "h200:0-3"), device.Set{"0"})
	if !ok || err != nil {
		t.Fatalf("wanted the lease, got ok=%v %v", ok, err)
	}
	defer release()
	closed := filepath.Join(top, "closed")
	os.Mkdir(closed, 0o755)
	readOnly := filepath.Join(top, "ro")
	os.Mkdir(readOnly, 0o500)
	os.Chown(readOnly, 65534, 65534)
	for _, tc := range []struct{ sub, want string }{
		{"shared", "held by pid "},
		{"closed", "error: the lock folder " + closed + " belongs to user 0 and is not open to all (mode 0755): a lock every user honours lives in a sticky folder open to all; ask its owner to chmod 1777 " + closed},
		{"ro", "error: the lock folder " + readOnly + " is read-only for this process (user 65534): permission denied; give one it may write with --lock-dir"},
	} {
		out, err := asNobody(t, "TestAnotherUsersLeases", "HOSTLOCK_NOBODY="+top, "HOSTLOCK_SUB="+tc.sub)
		if err != nil || !strings.Contains(out, tc.want) {
			t.Errorf("%s: wanted %q, got %q %v", tc.sub, tc.want, out, err)
		}
	}
	if _, err := os.Stat(filepath.Join(shared, DeviceFile("0"))); err != nil {
		t.Errorf("wanted our held lock file kept in the sticky folder, got %v", err)
	}
}
