package main

import (
	"os"
	"runtime/debug"
	"strconv"
	"strings"
)

// cgroupMemoryMax is the memory limit of the container (cgroup v2, seen
// through the container's cgroup namespace).
const cgroupMemoryMax = "/sys/fs/cgroup/memory.max"

// setMemoryLimit gives the Go GC a soft limit of 90% of the container's
// memory limit, unless GOMEMLIMIT is set (the runtime reads that itself).
//
// Why: a full sync holds transient state in proportion to the cluster (the
// netlink batch must exist whole), and with the default GOGC=100 the heap
// grows to about twice that before a collection: a container limit could
// be hit although the live heap never comes near it. A soft limit
// only makes the GC run more often near it; it never fails an allocation.
// Without a container limit nothing is set.
func setMemoryLimit() (limit int64, ok bool) {
	limit, ok = memoryLimit(os.Getenv("GOMEMLIMIT"), cgroupMemoryMax)
	if ok {
		debug.SetMemoryLimit(limit)
	}
	return limit, ok
}

// memoryLimit returns the soft limit to set, given GOMEMLIMIT's value and
// the path of the cgroup's memory.max.
func memoryLimit(gomemlimit, path string) (int64, bool) {
	if gomemlimit != "" {
		return 0, false
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return 0, false
	}
	n, err := strconv.ParseInt(strings.TrimSpace(string(data)), 10, 64)
	if err != nil || n <= 0 { // "max": no limit
		return 0, false
	}
	return n / 10 * 9, true
}
