package trace

import (
	"errors"
	"fmt"
	"math/big"
	"net/netip"
	"slices"

	"github.com/nftproxy/nftproxy/nft"
)

// Packet is the first packet of a new connection.
type Packet struct {
	Saddr netip.Addr
	Daddr netip.Addr
	Proto uint8 // nft.ProtoTCP, nft.ProtoUDP, nft.ProtoSCTP, ...
	Dport uint16
	// Sport is the source port. A hash rung (Maglev) hashes it: with 0,
	// the trace gives every slot of the table its share, as a random source
	// port would.
	Sport uint16
	Mark  uint32
}

// Path is where a packet enters the node's netfilter hooks.
type Path int

const (
	// FromNetwork is a packet received on an interface, from outside or
	// from a pod: prerouting, then input if its destination (after DNAT)
	// is local, else forward and postrouting.
	FromNetwork Path = iota
	// FromHost is a packet sent by a process on the node: output and
	// postrouting; if its destination (after DNAT) is local, it then loops
	// back through prerouting (where nat chains no longer run: the
	// connection's DNAT is already set up) and input.
	FromHost
)

func (p Path) String() string {
	if p == FromHost {
		return "host"
	}
	return "network"
}

// Options describe the node the packet passes through.
type Options struct {
	From Path
	// LocalAddrs are the node's own addresses: a packet to one of them is
	// delivered to the node (input) rather than forwarded. Loopback
	// addresses are always local.
	LocalAddrs []netip.Addr
	// Steps asks for each outcome's Steps. Outcomes then merge only when
	// they came about by the same steps.
	Steps bool
}

func (o Options) isLocal(a netip.Addr) bool {
	return a.IsLoopback() || slices.Contains(o.LocalAddrs, a)
}

// Trace returns every way packet p can go through table t, each with its
// probability; the probabilities sum to 1. It fails when the walk meets
// what the kernel would refuse to load (chains nested deeper than 16, dnat
// outside nat prerouting and output, a key that does not fit its set) or
// what it cannot evaluate (nft.Foreign).
func Trace(t *nft.Table, p Packet, o Options) ([]Outcome, error) {
	if t == nil {
		return nil, errors.New("trace: nil table")
	}
	if err := checkPacket(t.Family, p); err != nil {
		return nil, err
	}
	tr := &tracer{table: t, saddr: p.Saddr, sport: p.Sport, proto: p.Proto, opts: o}
	start := &walker{prob: big.NewRat(1, 1), daddr: p.Daddr, dport: p.Dport, mark: p.Mark}
	ws, err := tr.route(start, o)
	if err != nil {
		return nil, err
	}
	return merge(ws), nil
}

func checkPacket(f nft.Family, p Packet) error {
	for _, a := range []netip.Addr{p.Saddr, p.Daddr} {
		if !a.IsValid() || nft.FamilyOf(a) != f {
			return fmt.Errorf("trace: packet %s -> %s does not belong in a table of family %s", p.Saddr, p.Daddr, f)
		}
	}
	return nil
}

// hooks lists the hooks of each Path: first those before the routing
// decision, then, by the destination after DNAT, those of local delivery or
// of sending the packet on.
var hooks = map[Path]struct{ first, local, remote []string }{
	FromNetwork: {[]string{"prerouting"}, []string{"input"}, []string{"forward", "postrouting"}},
	// A packet to a local address loops back through lo after postrouting.
	FromHost: {[]string{"output", "postrouting"}, []string{"prerouting", "input"}, nil},
}

// route runs w through the hooks of its path and returns every walker at
// its end: dropped, rejected, or accepted (with local set when delivered to
// the node).
func (t *tracer) route(w *walker, o Options) ([]*walker, error) {
	path, ok := hooks[o.From]
	if !ok {
		return nil, fmt.Errorf("trace: unknown path %d", o.From)
	}
	ws, ended, err := t.hooks([]*walker{w}, path.first...)
	if err != nil {
		return nil, err
	}
	for _, w := range ws {
		then := path.remote
		if o.isLocal(w.daddr) {
			w.local, then = true, path.local
		}
		live, out, err := t.hooks([]*walker{w}, then...)
		if err != nil {
			return nil, err
		}
		ended = append(append(ended, out...), live...)
	}
	return ended, nil
}

// hooks runs ws through each hook in turn. It returns the walkers still
// going and those that ended in a drop or reject.
func (t *tracer) hooks(ws []*walker, hooks ...string) (live, ended []*walker, err error) {
	for _, h := range hooks {
		var out []*walker
		ws, out, err = t.hook(h, ws)
		if err != nil {
			return nil, nil, err
		}
		ended = append(ended, out...)
	}
	return ws, ended, nil
}

// hook runs the base chains attached to hook h, lowest priority first.
func (t *tracer) hook(h string, ws []*walker) (live, ended []*walker, err error) {
	m := manipOf(h)
	t.hookName = h
	for _, c := range baseChains(t.table, h) {
		var next []*walker
		for _, w := range ws {
			if c.Base.Type == "nat" && w.natDone[m] {
				next = append(next, w) // NAT is set up once per connection and direction
				continue
			}
			outs, err := t.base(c, w)
			if err != nil {
				return nil, nil, err
			}
			for _, o := range outs {
				if o.end == drop || o.end == reject {
					ended = append(ended, o)
				} else {
					next = append(next, o)
				}
			}
		}
		if c.Base.Type == "nat" {
			for _, w := range next {
				w.natDone[m] = true // the kernel binds a null NAT when no rule did
			}
		}
		ws = next
	}
	return ws, ended, nil
}

// baseChains returns t's base chains on hook h, sorted by priority.
func baseChains(t *nft.Table, h string) []*nft.Chain {
	var out []*nft.Chain
	for _, c := range t.Chains {
		if c.Base != nil && c.Base.Hook == h {
			out = append(out, c)
		}
	}
	slices.SortStableFunc(out, func(a, b *nft.Chain) int { return a.Base.Priority - b.Base.Priority })
	return out
}

// manip is a NAT direction: the kernel sets each up once per connection.
type manip int

const (
	manipDst manip = iota // prerouting and output: dnat
	manipSrc              // input and postrouting: snat, masquerade
)

func manipOf(hook string) manip {
	if hook == "input" || hook == "postrouting" {
		return manipSrc
	}
	return manipDst
}
