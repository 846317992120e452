package conntrack

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// SysctlRoot is where the kernel exposes sysctls. Under it, net/* resolves
// against the network namespace of the thread that opens the file.
const SysctlRoot = "/proc/sys"

// The conntrack TCP timeouts kube-proxy sets, in seconds. Both are per
// network namespace (kernel 4.x and later), so a test can set them in a
// namespace of its own.
const (
	tcpEstablishedSysctl = "net/netfilter/nf_conntrack_tcp_timeout_established"
	tcpCloseWaitSysctl   = "net/netfilter/nf_conntrack_tcp_timeout_close_wait"
)

// Timeouts are conntrack TCP timeouts to write; zero leaves the kernel's value.
type Timeouts struct {
	TCPEstablished time.Duration
	TCPCloseWait   time.Duration
}

// SysctlError is a sysctl that could not be read or set.
type SysctlError struct {
	Name string // dotted, as sysctl(8) names it
	Want string
	Err  error
}

func (e *SysctlError) Error() string {
	return fmt.Sprintf("set %s=%s: %v", e.Name, e.Want, e.Err)
}

func (e *SysctlError) Unwrap() error { return e.Err }

// SetTimeouts writes the set timeouts under root (normally SysctlRoot), each
// only when it differs from the current value, as kube-proxy does: an
// unchanged sysctl is never written, so a read-only /proc/sys that already
// holds the wanted value is no error. It tries every timeout and returns one
// *SysctlError per timeout it could not set; written lists the sysctls it
// changed.
func SetTimeouts(root string, t Timeouts) (written []string, errs []error) {
	for _, s := range []struct {
		path string
		d    time.Duration
	}{
		{tcpEstablishedSysctl, t.TCPEstablished},
		{tcpCloseWaitSysctl, t.TCPCloseWait},
	} {
		if s.d == 0 {
			continue
		}
		changed, err := setSeconds(root, s.path, s.d)
		switch {
		case err != nil:
			errs = append(errs, err)
		case changed:
			written = append(written, sysctlName(s.path))
		}
	}
	return written, errs
}

// setSeconds sets one sysctl to d in whole seconds (the kernel's unit,
// truncated as kube-proxy does) if it holds another value.
func setSeconds(root, path string, d time.Duration) (bool, error) {
	want := strconv.FormatInt(int64(d/time.Second), 10)
	fail := func(err error) (bool, error) {
		return false, &SysctlError{Name: sysctlName(path), Want: want, Err: err}
	}
	if d < time.Second {
		return fail(fmt.Errorf("%v is below the kernel's unit of one second", d))
	}
	file := filepath.Join(root, path)
	cur, err := os.ReadFile(file)
	if err != nil {
		// ENOENT: nf_conntrack is not loaded (yet).
		return fail(err)
	}
	if strings.TrimSpace(string(cur)) == want {
		return false, nil
	}
	// os.WriteFile would O_CREAT; a sysctl exists or it is not one.
	f, err := os.OpenFile(file, os.O_WRONLY|os.O_TRUNC, 0)
	if err != nil {
		return fail(err)
	}
	_, err = f.WriteString(want)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fail(err)
	}
	return true, nil
}

// sysctlName turns a path under the root into sysctl(8)'s dotted name.
func sysctlName(path string) string { return strings.ReplaceAll(path, "/", ".") }
