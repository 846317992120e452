package explain

import (
	"errors"
	"fmt"
	"net/netip"
	"time"

	"github.com/nftproxy/nftproxy/nft"
	"github.com/nftproxy/nftproxy/nft/trace"
)

// Options are what the table does not hold.
type Options struct {
	// Source names where the table came from, for the report: "kernel" or
	// "manifests".
	Source string
	// LocalAddrs are the node's own addresses.
	LocalAddrs []netip.Addr
	// PodCIDRs are Pod ranges known besides those the table holds (the
	// node's spec.podCIDRs): a source in them is inferred to be a Pod.
	PodCIDRs []netip.Prefix
	// Cluster is what manifests or the API server say; nil when neither
	// was given.
	Cluster *Cluster
	// Memory is the session-affinity memory read from the kernel, when
	// MemoryRead; otherwise a trace cannot tell a remembered client.
	Memory     []Remembered
	MemoryRead bool
	// Counted are the packets each counter object of the tables has
	// counted, by family and name, when read from the kernel; nil
	// otherwise.
	Counted map[nft.Family]map[string]uint64
}

// Remembered is one element of the kernel's affinity memory: Client was
// sent to the endpoint whose ID is ID, and the memory lasts Expires more.
type Remembered struct {
	Client  netip.Addr
	ID      uint32
	Expires time.Duration
}

// Request is a packet to explain.
type Request struct {
	// Src is the source address; invalid for an address that stands for
	// From (From must then be given).
	Src     netip.Addr
	SrcPort uint16
	Dst     netip.AddrPort
	Proto   uint8
	// From is where the packet comes from; "" infers it from Src.
	From Origin
}

// RequestError is a request that does not fit the table or the node: its
// Flag names the part of the request at fault.
type RequestError struct {
	Flag string // "src", "dst" or "from"
	Err  error
}

func (e *RequestError) Error() string { return fmt.Sprintf("--%s: %v", e.Flag, e.Err) }
func (e *RequestError) Unwrap() error { return e.Err }

// Trace explains where packet r goes through table t.
func Trace(t *nft.Table, r Request, o Options) (*Report, error) {
	w := newWorld(t, o)
	from, src, err := w.resolve(r)
	if err != nil {
		return nil, err
	}
	rep, err := explainPacket(w, o, r, from, src)
	if err != nil {
		return nil, err
	}
	rep.Schema, rep.Source = Schema, o.Source
	return rep, nil
}

func newWorld(t *nft.Table, o Options) world {
	cidrs := clusterCIDRs(t)
	for _, p := range o.PodCIDRs {
		if nft.FamilyOf(p.Addr()) == t.Family && !containsPrefix(cidrs, p) {
			cidrs = append(cidrs, p)
		}
	}
	return world{table: t, local: o.LocalAddrs, cidrs: cidrs}
}

func containsPrefix(ps []netip.Prefix, p netip.Prefix) bool {
	for _, q := range ps {
		if q.Contains(p.Addr()) && q.Bits() <= p.Bits() {
			return true
		}
	}
	return false
}

// resolve checks r against the table and the node, and settles where the
// packet comes from and its source address.
func (w world) resolve(r Request) (From, netip.Addr, error) {
	f := w.table.Family
	if !r.Dst.IsValid() || nft.FamilyOf(r.Dst.Addr()) != f {
		return From{}, netip.Addr{}, &RequestError{"dst", fmt.Errorf("%s is not an %s address", r.Dst, familyWord(f))}
	}
	if !r.Src.IsValid() {
		if r.From == "" {
			return From{}, netip.Addr{}, &RequestError{"src", errors.New("missing: give a source address, or --from to trace from a typical one")}
		}
		src, err := w.source(r.From, func(a netip.Addr) bool { return contains(w.table, nft.SetHairpin, a) })
		if err != nil {
			return From{}, netip.Addr{}, &RequestError{"from", err}
		}
		return From{Origin: string(r.From), Why: fmt.Sprintf("given; %s stands for it", src)}, src, nil
	}
	if nft.FamilyOf(r.Src) != f {
		return From{}, netip.Addr{}, &RequestError{"src", fmt.Errorf("%s is not an %s address, as --dst %s is", r.Src, familyWord(f), r.Dst)}
	}
	if r.From == "" {
		return w.infer(r.Src), r.Src, nil
	}
	from, err := w.given(r.From, r.Src)
	if err != nil {
		return From{}, netip.Addr{}, &RequestError{"from", err}
	}
	return from, r.Src, nil
}

// explainPacket traces one packet whose origin is settled.
func explainPacket(w world, o Options, r Request, from From, src netip.Addr) (*Report, error) {
	t := withMemory(w.table, o)
	outs, err := trace.Trace(t, trace.Packet{Saddr: src, Daddr: r.Dst.Addr(), Proto: r.Proto, Dport: r.Dst.Port(), Sport: r.SrcPort},
		trace.Options{From: Origin(from.Origin).path(), LocalAddrs: o.LocalAddrs, Steps: true})
	if err != nil {
		return nil, err
	}
	rep := &Report{Family: string(t.Family), From: from, Packet: Packet{Proto: protoName(r.Proto),
		Src: src.String(), SrcPort: r.SrcPort, Dst: r.Dst.Addr().String(), DstPort: r.Dst.Port()}}
	if en, ok := entryFor(t, r.Dst, r.Proto); ok && en.svc.Name != "" {
		sp := en.svc
		o.Cluster.refine(&sp, r.Dst.Addr())
		rep.Service = &sp
	}
	x := &explainer{w: w, t: t, o: o, r: r, src: src, svc: rep.Service}
	for _, out := range outs {
		rep.Outcomes = append(rep.Outcomes, x.outcome(out))
	}
	rep.Notes = x.notes()
	return rep, nil
}

// withMemory returns t with the affinity memory read from the kernel in
// its affinity set (a copy: t is not changed).
func withMemory(t *nft.Table, o Options) *nft.Table {
	if !o.MemoryRead || t.Set(nft.SetAffinity) == nil {
		return t
	}
	c := *t
	c.Sets = make([]*nft.Set, len(t.Sets))
	for i, s := range t.Sets {
		c.Sets[i] = s
		if s.Name == nft.SetAffinity {
			cp := *s
			cp.Elements = nil
			for _, m := range o.Memory {
				if nft.FamilyOf(m.Client) == t.Family {
					cp.Elements = append(cp.Elements, nft.Element{Key: []nft.Value{{Addr: m.Client}, {Num: m.ID}}})
				}
			}
			c.Sets[i] = &cp
		}
	}
	return &c
}
