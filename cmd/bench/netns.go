package main

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"time"

	"golang.org/x/sys/unix"

	"github.com/nftproxy/nftproxy/integration/setns"
	"github.com/nftproxy/nftproxy/nft/kernel"
)

// netns is a network namespace this command created with `ip netns add`;
// remove deletes it. Nothing here ever touches the namespace the command
// was started in: rules go in through a netlink socket bound to the
// namespace (nftables.WithNetNSFd), commands through `ip netns exec`.
type netns struct {
	name string
}

// newNetns creates a namespace named bench-prefix plus a random suffix,
// with its loopback up (setns.Add).
func newNetns(prefix string) (*netns, error) {
	name, err := setns.Add("bench-" + prefix)
	if err != nil {
		return nil, err
	}
	return &netns{name: name}, nil
}

func (ns *netns) path() string { return setns.Path(ns.name) }

// open returns a descriptor of the namespace for nftables.WithNetNSFd; the
// caller closes it.
func (ns *netns) open() (int, error) {
	fd, err := unix.Open(ns.path(), unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return -1, fmt.Errorf("open namespace %s: %w", ns.name, err)
	}
	return fd, nil
}

// kernel opens our applier on the namespace's tables. kernel.Open keeps a
// descriptor of its own, so the one opened here is closed at once.
func (ns *netns) kernel() (*kernel.Kernel, error) {
	fd, err := ns.open()
	if err != nil {
		return nil, err
	}
	defer unix.Close(fd)
	return kernel.Open(fd)
}

// exec runs a command inside the namespace and returns its combined
// output; timeout bounds it, besides setns's own bound.
func (ns *netns) exec(timeout time.Duration, args ...string) (string, error) {
	return command(timeout, append([]string{"ip", "netns", "exec", ns.name}, args...)...)
}

// remove kills what is left in the namespace and deletes it.
func (ns *netns) remove() error { return setns.Remove(ns.name) }

// command runs a command, killed after timeout, and returns its combined
// output.
func command(timeout time.Duration, args ...string) (string, error) {
	return setns.RunTimeout(timeout, args...)
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
