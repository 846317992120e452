package lab

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// Binary returns a function that gives a test the path of a program the
// tests run: the one find finds or builds, once per test process. A test
// fails, naming what, when find could not have it.
func Binary(what string, find func() (string, error)) func(testing.TB) string {
	once := sync.OnceValues(find)
	return func(t testing.TB) string {
		t.Helper()
		path, err := once()
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		return path
	}
}

// Nftproxy returns $NFTPROXY, or an nftproxy built from this module once
// per test process: every suite that runs the real command (integration,
// failure, e2e and the agent suites) gets it here.
var Nftproxy = Binary("nftproxy binary", findNftproxy)

// builtDir is the directory of the nftproxy built here, "" before.
var builtDir string

// Main runs the tests of m, removes the nftproxy Nftproxy built, if it
// built one, and exits with the tests' status: a suite's TestMain is
// lab.Main(m).
func Main(m *testing.M) {
	code := m.Run()
	if builtDir != "" {
		_ = os.RemoveAll(builtDir)
	}
	os.Exit(code)
}

func findNftproxy() (string, error) {
	if p := os.Getenv("NFTPROXY"); p != "" {
		return filepath.Abs(p)
	}
	dir, err := os.MkdirTemp("", "nftproxy-bin-")
	if err != nil {
		return "", err
	}
	// The directory outlives the tests of one process unless its TestMain
	// is lab.Main; it is small and in the temporary directory.
	builtDir = dir
	path := filepath.Join(dir, "nftproxy")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, "go", "build", "-o", path, "github.com/nftproxy/nftproxy/cmd/nftproxy").CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("go build: %w: %s", err, strings.TrimSpace(string(out)))
	}
	return path, nil
}
