package explain

import (
	"fmt"
	"net/netip"
	"strings"

	"github.com/nftproxy/nftproxy/nft"
)

// ServiceReport is every entry point of one Service, as a table holds it,
// each traced from the usual kinds of client.
type ServiceReport struct {
	Schema  string  `json:"schema"`
	Source  string  `json:"source"`
	Service string  `json:"service"` // NAMESPACE/NAME
	Entries []Entry `json:"entries"`
	// Comparison is set when the table was compared with what manifests or
	// the API server compile to.
	Comparison *Comparison `json:"comparison,omitempty"`
	Notes      []string    `json:"notes,omitempty"`
}

// Entry is one way into the Service: a ClusterIP, externalIP or
// load-balancer IP and port, or a NodePort, in one family.
type Entry struct {
	Family string `json:"family"`
	Port   string `json:"port"` // the Service port's name, or its number
	Proto  string `json:"proto"`
	Entry  string `json:"entry"` // as ServicePort.Entry
	// Destination is the address and port traced; for a NodePort, on the
	// first of NodePortAddresses.
	Destination       string   `json:"destination"`
	NodePortAddresses []string `json:"nodePortAddresses,omitempty"`
	// AllowedSources are the entry's loadBalancerSourceRanges, when it
	// has some.
	AllowedSources []string `json:"allowedSources,omitempty"`
	// Traces are the entry traced from a Pod, from outside the cluster
	// (inside and outside the source ranges, when there are some) and from
	// the node.
	Traces []Report `json:"traces"`
}

// Service explains every entry of Service key ("NAMESPACE/NAME") in the
// tables of rs.
func Service(rs nft.Ruleset, key string, o Options) (*ServiceReport, error) {
	ns, name, ok := strings.Cut(key, "/")
	if !ok || ns == "" || name == "" || strings.Contains(name, "/") {
		return nil, &RequestError{"service", fmt.Errorf("%q: want NAMESPACE/NAME", key)}
	}
	rep := &ServiceReport{Schema: Schema, Source: o.Source, Service: key, Entries: []Entry{}}
	for _, f := range nft.Families {
		t := rs[f]
		if t == nil {
			continue
		}
		w := newWorld(t, o)
		for _, en := range serviceEntries(t, ns, name) {
			e, err := traceEntry(w, o, en)
			if err != nil {
				return nil, err
			}
			rep.Entries = append(rep.Entries, e)
		}
	}
	if len(rep.Entries) == 0 {
		rep.Notes = append(rep.Notes, fmt.Sprintf("no entry of %s in the tables: the Service does not exist, has no "+
			"ClusterIP (headless), is an ExternalName, or is not synced to this node yet", key))
	}
	return rep, nil
}

// traceEntry traces entry en from each kind of client.
func traceEntry(w world, o Options, en entry) (Entry, error) {
	e := Entry{Family: string(w.table.Family), Port: en.svc.Port, Proto: protoName(en.proto), Entry: en.svc.Entry}
	sp := en.svc
	o.Cluster.refine(&sp, en.dst.Addr())
	e.Entry = sp.Entry
	for _, a := range en.addrs {
		e.NodePortAddresses = append(e.NodePortAddresses, a.String())
	}
	if !en.dst.IsValid() {
		return e, nil // a NodePort that no node address accepts
	}
	e.Destination = en.dst.String()
	allowed := allowedSources(w.table, en.dst, en.proto)
	e.AllowedSources = prefixStrings(allowed)
	for _, c := range clients(w, en, allowed) {
		r := Request{Src: c.src, Dst: en.dst, Proto: en.proto, From: c.origin}
		rep, err := explainPacket(w, o, r, From{Origin: string(c.origin), Why: c.why}, c.src)
		if err != nil {
			return Entry{}, err
		}
		e.Traces = append(e.Traces, *rep)
	}
	return e, nil
}

// client is a source a Service entry is traced from.
type client struct {
	origin Origin
	src    netip.Addr
	why    string
}

// clients are the sources en is traced from: a Pod (when the table knows
// the cluster CIDRs), a client outside the cluster (one inside and one
// outside the source ranges, when there are some) and the node itself. A
// kind with no address to stand for it is left out.
func clients(w world, en entry, allowed []netip.Prefix) []client {
	isEndpoint := func(a netip.Addr) bool { return contains(w.table, nft.SetHairpin, a) }
	var out []client
	add := func(o Origin, why string, avoid func(netip.Addr) bool) {
		if src, err := w.source(o, avoid); err == nil {
			out = append(out, client{o, src, why})
		}
	}
	if len(w.cidrs) > 0 {
		add(Pod, "a Pod that is no endpoint", isEndpoint)
	}
	external := "a client outside the cluster"
	if len(w.cidrs) == 0 {
		external = "a Pod or a client outside the cluster (the table knows no cluster CIDR)"
	}
	if len(allowed) > 0 {
		if src, ok := inside(allowed[0]); ok && !w.isLocal(src) {
			out = append(out, client{External, src, external + ", inside loadBalancerSourceRanges"})
		}
		add(External, external+", outside loadBalancerSourceRanges", func(a netip.Addr) bool { return inAny(allowed, a) || isEndpoint(a) })
	} else {
		add(External, external, isEndpoint)
	}
	add(Node, "the node itself", isEndpoint)
	return out
}

// inside returns an address of p that is not its network address, when
// there is one.
func inside(p netip.Prefix) (netip.Addr, bool) {
	a := p.Masked().Addr()
	if p.IsSingleIP() {
		return a, true
	}
	a = a.Next()
	return a, a.IsValid() && p.Contains(a)
}

func inAny(ps []netip.Prefix, a netip.Addr) bool {
	for _, p := range ps {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

func prefixStrings(ps []netip.Prefix) []string {
	var out []string
	for _, p := range ps {
		out = append(out, p.String())
	}
	return out
}
