package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"github.com/nftproxy/nftproxy/integration/setns"
)

// netns is a network namespace this command created with `ip netns add`;
// remove deletes it. Nothing here ever touches the namespace the command
// was started in: rules go in through a netlink socket bound to the
// namespace (nftables.WithNetNSFd), commands through `ip netns exec`.
type netns struct {
	name string
}

// newNetns creates a namespace named prefix plus a random suffix, with its
// loopback up.
func newNetns(prefix string) (*netns, error) {
	b := make([]byte, 3)
	_, _ = rand.Read(b)
	ns := &netns{name: "bench-" + prefix + "-" + hex.EncodeToString(b)}
	if _, err := command(30*time.Second, "ip", "netns", "add", ns.name); err != nil {
		return nil, fmt.Errorf("create namespace: %w", err)
	}
	if _, err := ns.exec(10*time.Second, "ip", "link", "set", "lo", "up"); err != nil {
		return nil, errors.Join(err, ns.remove())
	}
	return ns, nil
}

func (ns *netns) path() string { return filepath.Join("/run/netns", ns.name) }

// open returns a descriptor of the namespace for nftables.WithNetNSFd; the
// caller closes it.
func (ns *netns) open() (int, error) {
	fd, err := unix.Open(ns.path(), unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return -1, fmt.Errorf("open namespace %s: %w", ns.name, err)
	}
	return fd, nil
}

// exec runs a command inside the namespace and returns its combined output.
func (ns *netns) exec(timeout time.Duration, args ...string) (string, error) {
	return command(timeout, append([]string{"ip", "netns", "exec", ns.name}, args...)...)
}

// remove deletes the namespace. The kernel frees it (and its rules) once the
// last descriptor and socket in it are closed.
func (ns *netns) remove() error {
	_, err := command(30*time.Second, "ip", "netns", "del", ns.name)
	return err
}

func command(timeout time.Duration, args ...string) (string, error) {
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

// do runs fn on an OS thread switched into the namespace, so that sockets
// fn creates belong to it (see setns.Do).
func (ns *netns) do(fn func() error) error { return setns.Do(ns.path(), fn) }

// requireRoot explains why the benchmarks cannot run.
func requireRoot() error {
	if os.Geteuid() != 0 {
		return errors.New("needs root: it creates network namespaces and programs nftables in them (run with sudo)")
	}
	for _, tool := range []string{"ip", "nft"} {
		if _, err := exec.LookPath(tool); err != nil {
			return fmt.Errorf("%s not found in PATH", tool)
		}
	}
	return nil
}
