package main

import (
	"errors"
	"os"
	"runtime"
	"runtime/pprof"
)

// profiles names the pprof files `bench sync-once` writes, "" for none:
// how the costs in docs/benchmarks.md were found.
type profiles struct{ cpu, mem string }

// around runs fn under the CPU profiler, then writes a heap profile.
func (p profiles) around(fn func() error) error {
	if p.cpu != "" {
		f, err := os.Create(p.cpu)
		if err != nil {
			return err
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return err
		}
	}
	err := fn()
	if p.cpu != "" {
		pprof.StopCPUProfile()
	}
	if p.mem == "" {
		return err
	}
	f, ferr := os.Create(p.mem)
	if ferr != nil {
		return errors.Join(err, ferr)
	}
	defer f.Close()
	runtime.GC()
	return errors.Join(err, pprof.Lookup("allocs").WriteTo(f, 0))
}
