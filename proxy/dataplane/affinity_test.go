package dataplane

import (
	"net/netip"
	"testing"

	"github.com/nftproxy/nftproxy/nft"
)

// affinityKernel commits one transaction per ForgetAffinity that deletes
// something, like nft/kernel.Kernel.
type affinityKernel struct {
	*nft.Fake
	stale int
}

func (k *affinityKernel) ForgetAffinity(nft.Family, func(netip.AddrPort) bool) (int, error) {
	if k.stale > 0 {
		k.Gen++
	}
	n := k.stale
	k.stale = 0
	return n, nil
}

func TestForgetAffinityIsNotAnExternalChange(t *testing.T) {
	k := &affinityKernel{Fake: nft.NewFake()}
	d := New(k)
	mustSync(t, d, k.Fake, input(cluster(3, 2)))
	tests := []struct {
		name     string
		stale    int
		foreign  bool // somebody else commits as well
		external bool
	}{
		{"nothing to forget", 0, false, false},
		{"one transaction of ours", 4, false, false},
		{"ours and a foreign one", 4, true, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			k.stale = tc.stale
			if tc.foreign {
				k.Gen++
			}
			if n, err := d.ForgetAffinity(nft.IPv4, nil); err != nil || n != tc.stale {
				t.Fatalf("ForgetAffinity = %d, %v; want %d", n, err, tc.stale)
			}
			if _, moved := d.external(); moved != tc.external {
				t.Fatalf("external change reported: %v, want %v", moved, tc.external)
			}
		})
	}
}
