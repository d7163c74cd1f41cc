package hostlock

import (
	"bufio"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/radixark/miles-ci/cirun"
	"github.com/radixark/miles-ci/device"
)

func host(t *testing.T, s string) cirun.Host {
	t.Helper()
	h, err := cirun.ParseHost(s, nil)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

func at(hms string) func() time.Time {
	return func() time.Time { t, _ := time.Parse("15:04:05", hms); return t }
}

func TestTwoLeasesNeverShareADevice(t *testing.T) {
	dir := t.TempDir()
	h := host(t, "none:h200:0-3")
	a := &Lock{Dir: dir, Who: "miles-ci ci --gpus none:h200:0-3", Now: at("13:45:01")}
	b := &Lock{Dir: dir, Who: "miles-ci run", Now: at("13:46:00")}
	releaseA, _, ok, err := a.TryLease(h, device.Set{"0", "1"})
	if err != nil || !ok {
		t.Fatalf("wanted the first lease, got ok=%v %v", ok, err)
	}
	_, held, ok, err := b.TryLease(h, device.Set{"1", "2"})
	want := cirun.Held{Devices: device.Set{"1"}, By: "pid " + strconv.Itoa(os.Getpid()) + " (miles-ci ci --gpus none:h200:0-3) since 13:45:01"}
	if err != nil || ok || held.Devices.String() != "1" || held.By != want.By {
		t.Fatalf("wanted device 1 held by %q, got ok=%v %+v %v", want.By, ok, held, err)
	}
	// Nothing of the failed lease is kept: 2 is free.
	releaseB, _, ok, err := b.TryLease(h, device.Set{"2", "3"})
	if err != nil || !ok {
		t.Fatalf("wanted 2,3 free, got ok=%v %v", ok, err)
	}
	// A lease of the whole host waits for every partial one.
	_, held, ok, _ = b.TryLease(h, device.Set{"0", "1", "2", "3"})
	if ok || len(held.Devices) == 0 {
		t.Fatalf("wanted the whole host held, got ok=%v %+v", ok, held)
	}
	releaseA()
	releaseB()
	releaseWhole, _, ok, err := b.TryLease(h, device.Set{"0", "1", "2", "3"})
	if err != nil || !ok {
		t.Fatalf("wanted the whole host once both let go, got ok=%v %v", ok, err)
	}
	_, held, ok, _ = a.TryLease(h, device.Set{"3"})
	if ok || !strings.Contains(held.By, "(miles-ci run)") {
		t.Fatalf("wanted device 3 held by the whole-host lease, got ok=%v %+v", ok, held)
	}
	releaseWhole()
}

// TestKilledHolderFreesItsDevices kills a process that holds a lease: the
// kernel lets its locks go at once.
func TestKilledHolderFreesItsDevices(t *testing.T) {
	if os.Getenv("HOSTLOCK_HOLD") != "" {
		l := &Lock{Dir: os.Getenv("HOSTLOCK_HOLD"), Who: "holder"}
		if _, _, ok, err := l.TryLease(host(t, "none:0-3"), device.Set{"0", "1"}); !ok || err != nil {
			os.Exit(3)
		}
		os.Stdout.WriteString("held\n")
		time.Sleep(time.Minute)
		os.Exit(0)
	}
	dir := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=TestKilledHolderFreesItsDevices$")
	cmd.Env = append(os.Environ(), "HOSTLOCK_HOLD="+dir)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	if line, _ := bufio.NewReader(out).ReadString('\n'); line != "held\n" {
		cmd.Process.Kill()
		t.Fatalf("the holder did not take its lease: %q", line)
	}
	l := &Lock{Dir: dir, Who: "waiter"}
	if _, held, ok, _ := l.TryLease(host(t, "none:0-3"), device.Set{"1"}); ok || !strings.Contains(held.By, "(holder)") {
		cmd.Process.Kill()
		t.Fatalf("wanted device 1 held by the other process, got ok=%v %+v", ok, held)
	}
	cmd.Process.Kill()
	cmd.Wait()
	release, _, ok, err := l.TryLease(host(t, "none:0-3"), device.Set{"0", "1"})
	if !ok || err != nil {
		t.Fatalf("wanted the killed holder's devices free at once, got ok=%v %v", ok, err)
	}
	release()
}

func TestLockFolderErrors(t *testing.T) {
	file := t.TempDir() + "/f"
	os.WriteFile(file, nil, 0o644)
	l := &Lock{Dir: file + "/gpus"}
	_, _, _, err := l.TryLease(host(t, "0-1"), device.Set{"0"})
	if err == nil || !strings.Contains(err.Error(), "give another with --lock-dir") {
		t.Errorf("wanted an error naming --lock-dir, got %v", err)
	}
	dir := t.TempDir()
	os.Symlink("/etc/passwd", dir+"/"+DeviceFile("0"))
	l = &Lock{Dir: dir}
	_, _, _, err = l.TryLease(host(t, "0-1"), device.Set{"0"})
	if err == nil || !strings.Contains(err.Error(), "is a symbolic link, not a regular file as a lock file miles-ci makes is") {
		t.Errorf("a symlinked lock file: wanted it refused, got %v", err)
	}
}

// TestLockFilesOpenToEveryUser: a runner's job hook that runs as another
// user must open the folder and the files, whatever this process's umask.
func TestLockFilesOpenToEveryUser(t *testing.T) {
	dir := t.TempDir() + "/gpus"
	l := &Lock{Dir: dir}
	release, _, ok, err := l.TryLease(host(t, "0-1"), device.Set{"0"})
	if !ok || err != nil {
		t.Fatalf("wanted the lease, got ok=%v %v", ok, err)
	}
	defer release()
	for path, want := range map[string]os.FileMode{dir: 0o777 | os.ModeSticky | os.ModeDir, dir + "/" + DeviceFile("0"): 0o666} {
		if info, err := os.Stat(path); err != nil || info.Mode() != want {
			t.Errorf("%s: wanted mode %v, got %v %v", path, want, info.Mode(), err)
		}
	}
}
