package setns

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// The lifecycle of a named network namespace (`ip netns`), for the test lab
// and the benchmarks alike: both make their namespaces here, and each
// removes every one it made. Nothing here touches the namespace the caller
// runs in.

// execTimeout bounds every `ip` command, so a stuck tool cannot hang a
// test or a benchmark.
const execTimeout = 30 * time.Second

// Add creates a namespace named prefix plus a random suffix, with its
// loopback up, and returns its name.
func Add(prefix string) (string, error) {
	var name string
	var err error
	for range 3 { // a clash of random names is unlikely; retry it anyway
		name = prefix + "-" + randomSuffix()
		if _, err = Run("ip", "netns", "add", name); err == nil {
			break
		}
	}
	if err != nil {
		return "", fmt.Errorf("create namespace: %w", err)
	}
	if _, err := Exec(name, "ip", "link", "set", "lo", "up"); err != nil {
		return "", fmt.Errorf("%w (and removing it: %v)", err, Remove(name))
	}
	return name, nil
}

// Path is the bind mount of namespace name, /run/netns/<name>.
func Path(name string) string { return filepath.Join("/run/netns", name) }

// Exec runs args inside namespace name with `ip netns exec` and returns the
// combined output.
func Exec(name string, args ...string) (string, error) {
	return Run(append([]string{"ip", "netns", "exec", name}, args...)...)
}

// Remove kills the processes left in namespace name, then deletes it. The
// kernel frees it (and its rules) once the last descriptor and socket in
// it are closed.
func Remove(name string) error {
	if out, err := Run("ip", "netns", "pids", name); err == nil {
		for _, f := range strings.Fields(out) {
			// Never this process: a thread inside Do on the main thread
			// makes "ip netns pids" list it.
			if pid, err := strconv.Atoi(f); err == nil && pid != os.Getpid() {
				_ = syscall.Kill(pid, syscall.SIGKILL) // a process in the namespace we made
			}
		}
	}
	_, err := Run("ip", "netns", "del", name)
	return err
}

// Run runs a command with a timeout of 30 s and returns its combined
// output.
func Run(args ...string) (string, error) { return RunTimeout(execTimeout, args...) }

// RunTimeout runs a command, killed after timeout, and returns its combined
// output.
func RunTimeout(timeout time.Duration, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	out, err := exec.CommandContext(ctx, args[0], args[1:]...).CombinedOutput()
	if ctx.Err() != nil {
		return string(out), fmt.Errorf("%s: timed out after %s", strings.Join(args, " "), timeout)
	}
	if err != nil {
		return string(out), fmt.Errorf("%s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(string(out)))
	}
	return string(out), nil
}

// randomSuffix returns 6 hex digits: names stay short and unique enough.
func randomSuffix() string {
	b := make([]byte, 3)
	_, _ = rand.Read(b) // crypto/rand.Read never fails on Linux
	return hex.EncodeToString(b)
}
