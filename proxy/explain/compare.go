package explain

import (
	"fmt"
	"slices"
	"strings"

	"github.com/nftproxy/nftproxy/nft"
)

// Comparison says whether a table does with a Service's traffic what the
// table compiled from manifests or the API server's objects would do.
type Comparison struct {
	Against     string   `json:"against"` // "manifests" or "api-server"
	Matches     bool     `json:"matches"`
	Differences []string `json:"differences,omitempty"`
}

// Compare traces every packet of rep again through the tables of desired
// (compiled from what against names: "manifests" or "api-server") and through rep's own tables, and
// sets rep.Comparison: the entries each side lacks, and the traced packets
// whose outcomes differ. Session-affinity memory is left out on both
// sides: it belongs to clients, not to the Service.
func Compare(rep *ServiceReport, live, desired nft.Ruleset, against string, o Options) error {
	o.MemoryRead, o.Memory = false, nil
	ns, name, _ := strings.Cut(rep.Service, "/")
	c := &Comparison{Against: against}
	for _, f := range nft.Families {
		diffs, err := compareFamily(live[f], desired[f], ns, name, against, o)
		if err != nil {
			return err
		}
		c.Differences = append(c.Differences, diffs...)
	}
	c.Matches = len(c.Differences) == 0
	rep.Comparison = c
	return nil
}

func compareFamily(live, desired *nft.Table, ns, name, against string, o Options) ([]string, error) {
	liveEntries, wantEntries := entriesOf(live, ns, name), entriesOf(desired, ns, name)
	var diffs []string
	for k, en := range wantEntries {
		if _, ok := liveEntries[k]; !ok {
			diffs = append(diffs, fmt.Sprintf("%s: missing from this table, but in what %s say", entryTitle(en), againstText(against)))
		}
	}
	for k, en := range liveEntries {
		want, ok := wantEntries[k]
		if !ok {
			diffs = append(diffs, fmt.Sprintf("%s: in this table, but not in what %s say", entryTitle(en), againstText(against)))
			continue
		}
		d, err := compareEntry(newWorld(live, o), newWorld(desired, o), o, en, want, against)
		if err != nil {
			return nil, err
		}
		diffs = append(diffs, d...)
	}
	slices.Sort(diffs)
	return diffs, nil
}

// entriesOf indexes a Service's entries by what they are reached with.
func entriesOf(t *nft.Table, ns, name string) map[string]entry {
	out := map[string]entry{}
	if t == nil {
		return out
	}
	for _, en := range serviceEntries(t, ns, name) {
		out[fmt.Sprintf("%t %s %d %s", en.nodePort(), t.Family, en.proto, keyText(en.elem))] = en
	}
	return out
}

func keyText(e nft.Element) string {
	parts := make([]string, len(e.Key))
	for i, v := range e.Key {
		parts[i] = fmt.Sprint(v.Addr, v.Num)
	}
	return strings.Join(parts, ".")
}

// compareEntry traces the entry's clients (chosen from the live table)
// through both tables.
func compareEntry(lw, dw world, o Options, live, want entry, against string) ([]string, error) {
	if !live.dst.IsValid() || !want.dst.IsValid() {
		return nil, nil
	}
	var diffs []string
	for _, c := range clients(lw, live, allowedSources(lw.table, live.dst, live.proto)) {
		r := Request{Src: c.src, Dst: live.dst, Proto: live.proto, From: c.origin}
		from := From{Origin: string(c.origin)}
		got, err := explainPacket(lw, o, r, from, c.src)
		if err != nil {
			return nil, err
		}
		exp, err := explainPacket(dw, o, r, from, c.src)
		if err != nil {
			return nil, err
		}
		if g, e := signature(got), signature(exp); g != e {
			diffs = append(diffs, fmt.Sprintf("%s from %s (%s): this table: %s; what %s say: %s",
				entryTitle(live), originText(string(c.origin)), c.src, g, againstText(against), e))
		}
	}
	return diffs, nil
}

// signature sums a report's outcomes up: probability, verdict,
// destination and masquerading, sorted.
func signature(r *Report) string {
	var parts []string
	for _, o := range r.Outcomes {
		s := fmt.Sprintf("%s %s %s", o.Probability, o.Verdict, o.Destination)
		if o.Masquerade != nil {
			s += " masqueraded"
		}
		parts = append(parts, s)
	}
	slices.Sort(parts)
	return strings.Join(parts, ", ")
}

func entryTitle(en entry) string {
	if en.nodePort() {
		return fmt.Sprintf("NodePort %s/%d (port %s)", protoName(en.proto), en.elem.Key[1].Num, en.svc.Port)
	}
	return fmt.Sprintf("%s %s/%s (port %s)", en.svc.Entry, en.dst, protoName(en.proto), en.svc.Port)
}

// againstText names what a table is compared with, in a sentence.
func againstText(against string) string {
	if against == "api-server" {
		return "the API server's objects"
	}
	return "the " + against
}
