package main

import (
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// machine is what the figures depend on, printed above every table: the
// machine is shared, so the load during the run is part of the result.
type machine struct {
	kernel, nft      string
	cores            int
	start, end       time.Time
	loadStart, loadE string
}

func describeMachine() *machine {
	var u unix.Utsname
	_ = unix.Uname(&u) // cannot fail on Linux
	m := &machine{kernel: unix.ByteSliceToString(u.Release[:]), cores: runtime.NumCPU(), start: time.Now()}
	if out, err := exec.Command("nft", "--version").Output(); err == nil {
		m.nft = strings.TrimSpace(string(out))
	}
	m.loadStart = loadAverage()
	return m
}

func (m *machine) finish() {
	m.end = time.Now()
	m.loadE = loadAverage()
}

// loadAverage is /proc/loadavg's 1, 5 and 15 minute figures.
func loadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "?"
	}
	return strings.Join(f[:3], " ")
}

func (m *machine) String() string {
	return fmt.Sprintf("Linux %s, %d cores, %s, Go %s; %s to %s UTC; load average (1/5/15 min) %s at start, %s at end",
		m.kernel, m.cores, m.nft, strings.TrimPrefix(runtime.Version(), "go"),
		m.start.UTC().Format("2006-01-02 15:04"), m.end.UTC().Format("15:04"), m.loadStart, m.loadE)
}

func firstLines(s string, n int) string {
	lines := strings.SplitN(strings.TrimSpace(s), "\n", n+1)
	return strings.Join(lines[:min(n, len(lines))], " / ")
}
