package conntrack

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// sysctlDir makes a fake sysctl root holding both timeouts.
func sysctlDir(t *testing.T, established, closeWait string) string {
	t.Helper()
	root := t.TempDir()
	dir := filepath.Join(root, "net", "netfilter")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for path, v := range map[string]string{tcpEstablishedSysctl: established, tcpCloseWaitSysctl: closeWait} {
		if err := os.WriteFile(filepath.Join(root, path), []byte(v+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

func readSysctl(t *testing.T, root, path string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root, path))
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(b))
}

func TestSetTimeouts(t *testing.T) {
	const est, cw = "net.netfilter.nf_conntrack_tcp_timeout_established", "net.netfilter.nf_conntrack_tcp_timeout_close_wait"
	for _, tc := range []struct {
		name                    string
		timeouts                Timeouts
		wantWritten             []string
		wantEstablished, wantCW string
	}{
		{"unset leaves both", Timeouts{}, nil, "432000", "60"},
		{"different values written", Timeouts{24 * time.Hour, time.Hour}, []string{est, cw}, "86400", "3600"},
		{"only the set one", Timeouts{TCPCloseWait: time.Hour}, []string{cw}, "432000", "3600"},
		{"equal value not written", Timeouts{120 * time.Hour, 90 * time.Second}, []string{cw}, "432000", "90"},
		{"seconds truncated", Timeouts{TCPCloseWait: 3600*time.Second + 900*time.Millisecond}, []string{cw}, "432000", "3600"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := sysctlDir(t, "432000", "60")
			written, errs := SetTimeouts(root, tc.timeouts)
			if len(errs) != 0 {
				t.Fatalf("errors: %v", errs)
			}
			if diff := cmp.Diff(tc.wantWritten, written); diff != "" {
				t.Errorf("written (-want +got):\n%s", diff)
			}
			if got := readSysctl(t, root, tcpEstablishedSysctl); got != tc.wantEstablished {
				t.Errorf("established = %s, want %s", got, tc.wantEstablished)
			}
			if got := readSysctl(t, root, tcpCloseWaitSysctl); got != tc.wantCW {
				t.Errorf("close_wait = %s, want %s", got, tc.wantCW)
			}
		})
	}
}

// TestSetTimeoutsReadOnly covers deploy/'s read-only /proc/sys: an equal
// value is not an error (it is never written), a different one is an error
// naming the sysctl and the wanted value, and the other is still tried.
//
// The read-only file is /proc/sys/kernel/osrelease (mode 0444, constant),
// linked in as close_wait: sysctl files ignore CAP_DAC_OVERRIDE, so even
// root gets EACCES and the host's value cannot change.
func TestSetTimeoutsReadOnly(t *testing.T) {
	const readOnly = "/proc/sys/kernel/osrelease"
	if _, err := os.Stat(readOnly); err != nil {
		t.Skipf("no %s: %v", readOnly, err)
	}
	root := sysctlDir(t, "86400", "60")
	cw := filepath.Join(root, tcpCloseWaitSysctl)
	if err := os.Remove(cw); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(readOnly, cw); err != nil {
		t.Fatal(err)
	}
	written, errs := SetTimeouts(root, Timeouts{24 * time.Hour, time.Hour})
	if len(written) != 0 {
		t.Errorf("written = %v, want none", written)
	}
	if len(errs) != 1 {
		t.Fatalf("errors = %v, want one (close_wait)", errs)
	}
	var se *SysctlError
	if !errors.As(errs[0], &se) || se.Name != "net.netfilter.nf_conntrack_tcp_timeout_close_wait" || se.Want != "3600" {
		t.Errorf("error = %#v, want a SysctlError for close_wait=3600", errs[0])
	}
	if !errors.Is(errs[0], fs.ErrPermission) {
		t.Errorf("error %v does not wrap fs.ErrPermission", errs[0])
	}
}

// TestSetTimeoutsUnchangedNotWritten checks that an equal value is not
// rewritten (the file's modification time stays), which is what makes a
// read-only /proc/sys harmless when the node already has the values.
func TestSetTimeoutsUnchangedNotWritten(t *testing.T) {
	root := sysctlDir(t, "86400", "3600")
	old := time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, p := range []string{tcpEstablishedSysctl, tcpCloseWaitSysctl} {
		if err := os.Chtimes(filepath.Join(root, p), old, old); err != nil {
			t.Fatal(err)
		}
	}
	written, errs := SetTimeouts(root, Timeouts{24 * time.Hour, time.Hour})
	if len(written) != 0 || len(errs) != 0 {
		t.Fatalf("written = %v, errors = %v, want neither", written, errs)
	}
	for _, p := range []string{tcpEstablishedSysctl, tcpCloseWaitSysctl} {
		fi, err := os.Stat(filepath.Join(root, p))
		if err != nil {
			t.Fatal(err)
		}
		if !fi.ModTime().Equal(old) {
			t.Errorf("%s was written (mtime %v)", p, fi.ModTime())
		}
	}
}

// TestSetTimeoutsErrors covers failures that do not depend on file modes:
// a missing sysctl (nf_conntrack not loaded) and a sub-second timeout. Each
// is reported and the other timeout is still set.
func TestSetTimeoutsErrors(t *testing.T) {
	t.Run("missing", func(t *testing.T) {
		root := sysctlDir(t, "432000", "60")
		if err := os.Remove(filepath.Join(root, tcpEstablishedSysctl)); err != nil {
			t.Fatal(err)
		}
		written, errs := SetTimeouts(root, Timeouts{24 * time.Hour, time.Hour})
		if len(errs) != 1 || !errors.Is(errs[0], fs.ErrNotExist) {
			t.Fatalf("errors = %v, want one wrapping fs.ErrNotExist", errs)
		}
		if _, err := os.Stat(filepath.Join(root, tcpEstablishedSysctl)); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("missing sysctl was created: %v", err)
		}
		if diff := cmp.Diff([]string{"net.netfilter.nf_conntrack_tcp_timeout_close_wait"}, written); diff != "" {
			t.Errorf("written (-want +got):\n%s", diff)
		}
	})
	t.Run("below a second", func(t *testing.T) {
		root := sysctlDir(t, "432000", "60")
		_, errs := SetTimeouts(root, Timeouts{TCPEstablished: 500 * time.Millisecond})
		if len(errs) != 1 {
			t.Fatalf("errors = %v, want one", errs)
		}
		if got := readSysctl(t, root, tcpEstablishedSysctl); got != "432000" {
			t.Errorf("established = %s, want 432000 unchanged", got)
		}
	})
}
