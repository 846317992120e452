package main

import (
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"syscall"

	"github.com/nftproxy/nftproxy/nft"
	"github.com/nftproxy/nftproxy/nft/kernel"
	"github.com/nftproxy/nftproxy/proxy/explain"
	"github.com/nftproxy/nftproxy/proxy/model"
)

// traceTables are the tables a trace reads and what the explainer needs
// besides.
type traceTables struct {
	rs   nft.Ruleset
	opts explain.Options
	// desired is what the manifests or the API server compile to, to
	// compare a Service with; nil when neither was given or the tables
	// traced are those very manifests.
	desired nft.Ruleset
	against string // "manifests" or "api-server"
	// lookup asks the API server for a Service, its EndpointSlices and
	// the Node, and sets opts.Cluster and desired from them; nil without
	// --kubeconfig or --in-cluster.
	lookup func(ns, name string, stderr io.Writer) error
}

// tables loads what the flags ask to trace: the kernel's tables, or the
// manifests compiled.
func (f *traceFlags) tables(stderr io.Writer) (*traceTables, error) {
	src := &traceTables{}
	if len(f.manifests.files) > 0 {
		l, err := f.manifests.load(stderr)
		if err != nil {
			return nil, err
		}
		src.opts = clusterOptions(l.snapshot, l.node)
		if !f.kernel {
			src.rs, src.opts.Source = l.compile(stderr), "manifests"
			src.opts.LocalAddrs = l.node.IPs
			return src, nil
		}
		src.desired, src.against = l.compile(stderr), "manifests"
	}
	if err := src.readKernel(); err != nil {
		return nil, err
	}
	if f.kubeconfig != "" || f.inCluster {
		src.lookup = f.apiLookup(src)
	}
	return src, nil
}

// clusterOptions are the explainer's options from the cluster's objects.
func clusterOptions(snap *model.Snapshot, node model.Node) explain.Options {
	return explain.Options{PodCIDRs: node.PodCIDRs, Cluster: &explain.Cluster{Snapshot: snap, Node: node.Name}}
}

// noTable says that family f has no table, and why that may be.
func (s *traceTables) noTable(f nft.Family) string {
	if s.opts.Source == "manifests" {
		return fmt.Sprintf("the manifests compile to no table %s %s: no Service or Node address of that family", f, nft.TableName)
	}
	return fmt.Sprintf("no table %s %s in this network namespace (nftproxy makes one only for a family the node or a Service uses)",
		f, nft.TableName)
}

// readKernel reads our tables, the session-affinity memory and the
// addresses of this network namespace.
func (s *traceTables) readKernel() error {
	k, err := kernel.Open(-1)
	if err != nil {
		return kernelError(err)
	}
	defer k.Close()
	if s.rs, err = k.Read(); err != nil {
		return kernelError(err)
	}
	for f := range s.rs {
		timed, err := k.ReadDynamic(f, explain.AffinitySet)
		if err != nil {
			return kernelError(err)
		}
		for _, e := range timed {
			if m, ok := explain.RememberedOf(e.Element, e.Expires); ok {
				s.opts.Memory = append(s.opts.Memory, m)
			}
		}
	}
	s.opts.MemoryRead, s.opts.Source = true, "kernel"
	if s.opts.Counted, err = readCounted(k, s.rs); err != nil {
		return kernelError(err)
	}
	s.opts.LocalAddrs, err = localAddrs()
	return err
}

// readCounted reads what the counter objects of our tables have counted.
func readCounted(k *kernel.Kernel, rs nft.Ruleset) (map[nft.Family]map[string]uint64, error) {
	out := map[nft.Family]map[string]uint64{}
	for f := range rs {
		vs, err := k.ReadCounters(f)
		if err != nil {
			return nil, err
		}
		out[f] = map[string]uint64{}
		for _, v := range vs {
			out[f][v.Name] = v.Packets
		}
	}
	return out, nil
}

// kernelError explains the usual reason the tables cannot be read.
func kernelError(err error) error {
	if errors.Is(err, syscall.EPERM) {
		return fmt.Errorf("read the nftables tables of this network namespace: %w: that needs CAP_NET_ADMIN: run as root, "+
			"or inside the nftproxy Pod (kubectl -n kube-system exec ds/nftproxy -- nftproxy trace ...); "+
			"-f PATH traces manifests without root", err)
	}
	return fmt.Errorf("read the nftables tables of this network namespace: %w", err)
}

// localAddrs are the addresses of this network namespace's interfaces:
// the node's own addresses, where trace runs on the node.
func localAddrs() ([]netip.Addr, error) {
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		return nil, fmt.Errorf("list the addresses of this network namespace: %w", err)
	}
	var out []netip.Addr
	for _, a := range addrs {
		if ipn, ok := a.(*net.IPNet); ok {
			if ip, ok := netip.AddrFromSlice(ipn.IP); ok {
				out = append(out, ip.Unmap())
			}
		}
	}
	return out, nil
}
