package explain

import (
	"fmt"
	"io"
	"strings"
)

// Text writes r for people: each entry, then the outcomes from each kind
// of client, one line each, with what all of a client's outcomes share
// said once below them. The paths are left out: trace one packet for them.
func (r *ServiceReport) Text(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "service: %s\ntables:  %s\n", r.Service, sourceText(r.Source))
	for _, e := range r.Entries {
		writeEntry(&b, e)
	}
	if c := r.Comparison; c != nil {
		if c.Matches {
			fmt.Fprintf(&b, "\ncompared with what %s say: the same outcomes for every entry and client\n", againstText(c.Against))
		} else {
			fmt.Fprintf(&b, "\ncompared with what %s say: %s\n", againstText(c.Against), plural(len(c.Differences), "difference"))
			for _, d := range c.Differences {
				fmt.Fprintf(&b, "  - %s\n", d)
			}
		}
	}
	writeNotes(&b, r.allNotes(), "")
	_, err := io.WriteString(w, b.String())
	return err
}

func writeEntry(b *strings.Builder, e Entry) {
	title := fmt.Sprintf("%s %s/%s, port %s", e.Entry, e.Destination, e.Proto, e.Port)
	if e.Entry == "NodePort" {
		title = fmt.Sprintf("NodePort %s/%s, port %s, on %s", portOf(e.Destination), e.Proto, e.Port, strings.Join(e.NodePortAddresses, ", "))
	}
	fmt.Fprintf(b, "\n%s\n", title)
	if e.Destination == "" {
		b.WriteString("  no address of this node accepts NodePorts (nodeport-ips is empty)\n")
	}
	if len(e.AllowedSources) > 0 {
		fmt.Fprintf(b, "  loadBalancerSourceRanges: %s\n", strings.Join(e.AllowedSources, ", "))
	}
	for _, t := range e.Traces {
		fmt.Fprintf(b, "  from %s, %s:\n", t.From.Why, t.Packet.Src)
		writeSummary(b, t.Outcomes, "    ")
	}
}

func portOf(addrPort string) string {
	if i := strings.LastIndex(addrPort, ":"); i >= 0 {
		return addrPort[i+1:]
	}
	return addrPort
}

// writeSummary writes one line per outcome, then the details every outcome
// shares once, and the others under their outcome.
func writeSummary(b *strings.Builder, outs []Outcome, indent string) {
	details := make([][]string, len(outs))
	for i, o := range outs {
		details[i] = outcomeDetails(o)
	}
	shared := sharedLines(details)
	for i, o := range outs {
		fmt.Fprintf(b, "%s%-5s %s\n", indent, o.Probability, headline(o))
		for _, d := range details[i] {
			if len(outs) == 1 || !shared[d] {
				fmt.Fprintf(b, "%s      %s\n", indent, d)
			}
		}
	}
	if len(outs) > 1 {
		for _, d := range details[0] {
			if shared[d] {
				fmt.Fprintf(b, "%s      (all) %s\n", indent, d)
			}
		}
	}
}

func outcomeDetails(o Outcome) []string {
	var out []string
	if o.Masquerade != nil {
		for _, r := range o.Masquerade.Reasons {
			out = append(out, "source masqueraded: "+r)
		}
	}
	if o.Affinity != nil {
		out = append(out, o.Affinity.Text)
	}
	out = append(out, o.Notes...)
	return out
}

// sharedLines are the lines every list holds.
func sharedLines(lists [][]string) map[string]bool {
	out := map[string]bool{}
	if len(lists) == 0 {
		return out
	}
	for _, l := range lists[0] {
		out[l] = true
	}
	for _, list := range lists[1:] {
		has := map[string]bool{}
		for _, l := range list {
			has[l] = true
		}
		for l := range out {
			out[l] = out[l] && has[l]
		}
	}
	return out
}

// allNotes are the report's notes and its traces', once each.
func (r *ServiceReport) allNotes() []string {
	seen := map[string]bool{}
	var out []string
	add := func(ns []string) {
		for _, n := range ns {
			if !seen[n] {
				seen[n] = true
				out = append(out, n)
			}
		}
	}
	add(r.Notes)
	for _, e := range r.Entries {
		for _, t := range e.Traces {
			add(t.Notes)
		}
	}
	return out
}
