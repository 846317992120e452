package dataplane

import (
	"net/netip"

	"github.com/nftproxy/nftproxy/nft"
)

// affinityForgetter is implemented by a Kernel that can delete
// session-affinity memory (nft/kernel.Kernel).
type affinityForgetter interface {
	ForgetAffinity(f nft.Family, keep func(netip.AddrPort) bool) (int, error)
}

// ForgetAffinity deletes the session-affinity elements of family f whose
// endpoint keep rejects (see nft/kernel.Kernel.ForgetAffinity), and counts
// the transaction that commits as ours, so that Watch does not report it as
// an external change and the next Sync does not read the tables back for
// it. It does nothing on a Kernel without session-affinity support. Use it,
// rather than the Kernel's own method, from post-sync hooks.
func (d *Dataplane) ForgetAffinity(f nft.Family, keep func(netip.AddrPort) bool) (int, error) {
	k, ok := d.k.(affinityForgetter)
	if !ok {
		return 0, nil
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	before, err := d.k.Generation()
	if err != nil {
		return 0, err
	}
	n, err := k.ForgetAffinity(f, keep)
	after, gerr := d.k.Generation()
	// At most one transaction, and only when something was deleted: any
	// other movement is somebody else's and stays visible as external.
	ours := after == before || (n > 0 && after == before+1)
	if gerr == nil && d.known && before == d.gen && ours {
		d.gen = after
	}
	return n, err
}
