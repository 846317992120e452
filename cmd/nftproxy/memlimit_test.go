package main

import (
	"os"
	"path/filepath"
	"testing"
)

func TestMemoryLimit(t *testing.T) {
	tests := []struct {
		name, env, file string
		want            int64
		wantOK          bool
	}{
		{name: "container limit", file: "268435456\n", want: 241591905, wantOK: true},
		{name: "no limit", file: "max\n"},
		{name: "GOMEMLIMIT wins", env: "150MiB", file: "268435456\n"},
		{name: "no cgroup file"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "memory.max")
			if tc.file != "" {
				if err := os.WriteFile(path, []byte(tc.file), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			got, ok := memoryLimit(tc.env, path)
			if got != tc.want || ok != tc.wantOK {
				t.Errorf("memoryLimit() = %d, %v; want %d, %v", got, ok, tc.want, tc.wantOK)
			}
		})
	}
}
