package main

import (
	"fmt"
	"os"
	"runtime"
	"runtime/debug"
	"runtime/pprof"
	"strconv"
	"strings"
	"time"
)

// phaseMemory is the memory and CPU cost of one phase: the peak resident set
// while it ran, the live heap it left behind, and the process's CPU time.
type phaseMemory struct {
	peakRSS, liveHeap uint64 // bytes
	user, sys         time.Duration
}

// measurePhaseMemory runs fn and returns what it cost. The kernel's high-water
// mark is reset first (clear_refs 5, Linux 4.0+) after a collection that
// returns freed memory to the kernel, so earlier phases do not count.
func measurePhaseMemory(fn func() error) (phaseMemory, error) {
	var m phaseMemory
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
	if m.peakRSS, err = vmHWM("/proc/self/status"); err != nil {
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

// vmHWM reads VmHWM, the peak resident memory so far, in bytes, from a
// /proc/PID/status file.
func vmHWM(status string) (uint64, error) {
	b, err := os.ReadFile(status)
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kib, err := strconv.ParseUint(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			return kib << 10, err
		}
	}
	return 0, fmt.Errorf("no VmHWM in %s", status)
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

func mibs(b uint64) string { return mib(float64(b)) }
