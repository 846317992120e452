package kernel

import (
	"errors"
	"fmt"
	"net/netip"

	"github.com/google/nftables"
	"github.com/google/nftables/binaryutil"
	"golang.org/x/sys/unix"

	"github.com/nftproxy/nftproxy/nft"
)

// AffinityMap and AffinityClients are the session-affinity map and the
// set of its keys (see nft's compile_affinity.go).
const (
	AffinityMap     = "affinity"
	AffinityClients = "affinity-clients"
)

// ForgetAffinity deletes the elements of family f's session-affinity map
// whose endpoint keep rejects, and their keys in the affinity-clients set,
// in one transaction, and returns how many it
// deleted. The map is filled from the packet path, so only the kernel
// knows its elements: nft cannot check in a rule that a remembered
// endpoint is still a Service's, so endpoints that went away are forgotten
// here, right after the sync that removed them.
func (k *Kernel) ForgetAffinity(f nft.Family, keep func(netip.AddrPort) bool) (int, error) {
	t := tableOf(f)
	set, err := k.conn.GetSetByName(t, AffinityMap)
	if errors.Is(err, unix.ENOENT) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("find affinity map: %w", err)
	}
	elems, err := k.conn.GetSetElements(set)
	if err != nil {
		return 0, fmt.Errorf("list affinity map: %w", err)
	}
	var stale []nftables.SetElement
	for _, e := range elems {
		if ep, ok := affinityEndpoint(f, e.Val); ok && !keep(ep) {
			stale = append(stale, nftables.SetElement{Key: e.Key})
		}
	}
	if len(stale) == 0 {
		return 0, nil
	}
	if err := k.conn.SetDeleteElements(set, stale); err != nil {
		return 0, fmt.Errorf("delete affinity elements: %w", err)
	}
	// The set must lose the keys too, in the same transaction: a key left
	// in it would make the chains refresh a map element that is gone.
	clients, err := k.conn.GetSetByName(t, AffinityClients)
	if err != nil {
		return 0, fmt.Errorf("find affinity clients set: %w", err)
	}
	present, err := k.conn.GetSetElements(clients)
	if err != nil {
		return 0, fmt.Errorf("list affinity clients set: %w", err)
	}
	if err := k.conn.SetDeleteElements(clients, presentKeys(present, stale)); err != nil {
		return 0, fmt.Errorf("delete affinity clients: %w", err)
	}
	if err := k.conn.Flush(); err != nil && !errors.Is(err, unix.ENOENT) {
		return 0, fmt.Errorf("delete %d affinity elements: %w", len(stale), err)
	}
	return len(stale), nil
}

// affinityEndpoint decodes an element's data: the address, then the port
// in the next 32-bit word.
func affinityEndpoint(f nft.Family, b []byte) (netip.AddrPort, bool) {
	_, size := addrOffset(f, nft.Daddr)
	if len(b) < int(size)+2 {
		return netip.AddrPort{}, false
	}
	a, ok := netip.AddrFromSlice(b[:size])
	return netip.AddrPortFrom(a, binaryutil.BigEndian.Uint16(b[size:size+2])), ok
}

// presentKeys returns the elements of want whose key is in present:
// deleting a key that is not there would fail the whole transaction.
func presentKeys(present, want []nftables.SetElement) []nftables.SetElement {
	have := make(map[string]bool, len(present))
	for _, e := range present {
		have[string(e.Key)] = true
	}
	var out []nftables.SetElement
	for _, e := range want {
		if have[string(e.Key)] {
			out = append(out, nftables.SetElement{Key: e.Key})
		}
	}
	return out
}
