package main

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"runtime"
	"runtime/debug"
	"runtime/pprof"
	"strconv"
	"syscall"
	"time"
)

// memory is the memory and CPU cost of one phase: the peak resident set
// while it ran, the live heap it left behind, and the process's CPU time.
type memory struct {
	peakRSS, liveHeap uint64 // bytes
	user, sys         time.Duration
}

// measureMemory runs fn and returns what it cost. The kernel's high-water
// mark is reset first (clear_refs 5, Linux 4.0+) after a collection that
// returns freed memory to the kernel, so earlier phases do not count.
func measureMemory(fn func() error) (memory, error) {
	var m memory
	debug.FreeOSMemory()
	if err := os.WriteFile("/proc/self/clear_refs", []byte("5"), 0); err != nil {
		return m, fmt.Errorf("reset peak RSS: %w", err)
	}
	u0, s0 := cpuTimes()
	if err := fn(); err != nil {
		return m, err
	}
	u1, s1 := cpuTimes()
	m.user, m.sys = u1-u0, s1-s0
	var err error
	if m.peakRSS, err = statusBytes("VmHWM:"); err != nil {
		return m, err
	}
	m.liveHeap = liveHeap()
	return m, nil
}

// liveHeap returns the bytes of heap objects reachable after a collection:
// the caller keeps what should count alive (runtime.KeepAlive).
func liveHeap() uint64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}

// statusBytes reads a "kB" field of /proc/self/status.
func statusBytes(field string) (uint64, error) {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0, err
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		f := bytes.Fields(sc.Bytes())
		if len(f) >= 2 && string(f[0]) == field {
			kb, err := strconv.ParseUint(string(f[1]), 10, 64)
			return kb << 10, err
		}
	}
	return 0, fmt.Errorf("no %s in /proc/self/status", field)
}

func cpuTimes() (user, sys time.Duration) {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru) // cannot fail for RUSAGE_SELF
	return time.Duration(ru.Utime.Nano()), time.Duration(ru.Stime.Nano())
}

// writeHeapProfile writes the allocation profile (in-use and allocated
// space since the start) to file, after a collection.
func writeHeapProfile(file string) error {
	out, err := os.Create(file)
	if err != nil {
		return err
	}
	defer out.Close()
	runtime.GC()
	return pprof.Lookup("allocs").WriteTo(out, 0)
}

func mib(b uint64) string { return fmt.Sprintf("%.0f MiB", float64(b)/(1<<20)) }
