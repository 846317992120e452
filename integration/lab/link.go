package lab

import (
	"fmt"
	"net/netip"
	"strings"
	"testing"
)

// Connect creates a veth pair between a and b, assigns the addresses (CIDR
// notation, IPv4 or IPv6) and brings both ends up. It returns the interface
// names in a and in b. Both ends are created directly inside their
// namespaces, never in the host's.
func Connect(t testing.TB, a *NS, aAddrs []string, b *NS, bAddrs []string) (aIf, bIf string) {
	t.Helper()
	aIf, bIf = a.newIfName(), b.newIfName()
	a.MustExec(t, "ip", "link", "add", aIf, "type", "veth", "peer", "name", bIf, "netns", b.Name)
	a.addAddrs(t, aIf, aAddrs)
	b.addAddrs(t, bIf, bAddrs)
	a.MustExec(t, "ip", "link", "set", aIf, "up")
	b.MustExec(t, "ip", "link", "set", bIf, "up")
	return aIf, bIf
}

// newIfName returns the next free veth name in the namespace: veth0, veth1...
func (ns *NS) newIfName() string {
	ns.mu.Lock()
	defer ns.mu.Unlock()
	name := fmt.Sprintf("veth%d", ns.nextIf)
	ns.nextIf++
	return name
}

// addAddrs assigns addresses to dev. IPv6 addresses skip duplicate address
// detection (nodad) so they are usable at once instead of tentative.
func (ns *NS) addAddrs(t testing.TB, dev string, addrs []string) {
	t.Helper()
	for _, a := range addrs {
		p, err := netip.ParsePrefix(a)
		if err != nil {
			t.Fatalf("%s: address %q: %v", ns.Name, a, err)
		}
		args := []string{"ip", "addr", "add", p.String(), "dev", dev}
		if p.Addr().Is6() {
			args = append(args, "nodad")
		}
		ns.MustExec(t, args...)
	}
}

// Route adds a route to dst (a prefix or "default") via the gateway via.
// The address family comes from via, so "default" works for IPv4 and IPv6.
func (ns *NS) Route(t testing.TB, dst, via string) {
	t.Helper()
	family := "-4"
	if strings.Contains(via, ":") {
		family = "-6"
	}
	ns.MustExec(t, "ip", family, "route", "add", dst, "via", via)
}
