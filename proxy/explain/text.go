package explain

import (
	"fmt"
	"io"
	"strings"

	"github.com/nftproxy/nftproxy/nft"
)

// Text writes r for people: the packet and what it was taken for, the
// Service it reaches, the path all outcomes share, then each outcome with
// the rest of its path.
func (r *Report) Text(w io.Writer) error {
	var b strings.Builder
	r.header(&b)
	head, tail := commonSteps(r.Outcomes)
	width := stepWidth(r.Outcomes)
	if head > 0 {
		b.WriteString("\npath:\n")
		writeSteps(&b, r.Outcomes[0].Steps[:head], "  ", width)
	}
	fmt.Fprintf(&b, "\n%s:\n", plural(len(r.Outcomes), "outcome"))
	for _, o := range r.Outcomes {
		writeOutcome(&b, o, "  ")
		writeSteps(&b, o.Steps[head:len(o.Steps)-tail], "        ", width)
	}
	if tail > 0 {
		b.WriteString("\nthen, for every outcome:\n")
		steps := r.Outcomes[0].Steps
		writeSteps(&b, steps[len(steps)-tail:], "  ", width)
	}
	writeNotes(&b, r.Notes, "")
	_, err := io.WriteString(w, b.String())
	return err
}

func (r *Report) header(b *strings.Builder) {
	src := r.Packet.Src
	if r.Packet.SrcPort != 0 {
		src = joinHostPort(src, r.Packet.SrcPort)
	}
	fmt.Fprintf(b, "packet:  %s %s -> %s\n", r.Packet.Proto, src, joinHostPort(r.Packet.Dst, r.Packet.DstPort))
	how := "assumed"
	if !r.From.Assumed {
		how = ""
	}
	fmt.Fprintf(b, "from:    %s (%s)\n", originText(r.From.Origin), strings.TrimPrefix(how+": "+r.From.Why, ": "))
	if r.Source != "" {
		fmt.Fprintf(b, "table:   %s kube-proxy, %s\n", r.Family, sourceText(r.Source))
	}
	if r.Service != nil {
		fmt.Fprintf(b, "service: %s, port %s, by its %s\n", r.Service.key(), r.Service.Port, r.Service.Entry)
	} else {
		b.WriteString("service: none\n")
	}
}

func sourceText(s string) string {
	switch s {
	case "kernel":
		return "read from the kernel (this network namespace)"
	case "manifests":
		return "compiled from the manifests"
	}
	return s
}

func originText(o string) string {
	switch Origin(o) {
	case Pod:
		return "a Pod"
	case Node:
		return "this node"
	}
	return "outside the cluster"
}

func joinHostPort(addr string, port uint16) string {
	if strings.Contains(addr, ":") {
		return fmt.Sprintf("[%s]:%d", addr, port)
	}
	return fmt.Sprintf("%s:%d", addr, port)
}

func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return fmt.Sprintf("%d %ss", n, word)
}

// writeOutcome writes o's headline and what explains it.
func writeOutcome(b *strings.Builder, o Outcome, indent string) {
	fmt.Fprintf(b, "%s%-5s %s\n", indent, o.Probability, headline(o))
	more := indent + "      "
	if o.Masquerade != nil {
		for _, r := range o.Masquerade.Reasons {
			fmt.Fprintf(b, "%ssource masqueraded: %s\n", more, r)
		}
	}
	if o.Affinity != nil {
		fmt.Fprintf(b, "%s%s\n", more, o.Affinity.Text)
	}
	if o.Counter != "" {
		so := ""
		if o.CounterPackets != nil {
			so = fmt.Sprintf(", %d packets so far", *o.CounterPackets)
		}
		fmt.Fprintf(b, "%scounted in counter %s (%s%s)\n", more, o.Counter, counterMetric(o.Counter), so)
	}
	for _, n := range o.Notes {
		fmt.Fprintf(b, "%s%s\n", more, n)
	}
}

func headline(o Outcome) string {
	switch {
	case o.Verdict != "accept":
		return strings.ToUpper(o.Verdict) + ": " + o.Reason
	case o.Endpoint != nil:
		return "DNAT to " + o.Endpoint.Address + endpointText(o.Endpoint)
	case o.DNAT:
		return "DNAT to " + o.Destination
	}
	return "accept, unchanged: " + o.Reason
}

func endpointText(ep *Endpoint) string {
	var parts []string
	switch {
	case ep.Node != "" && ep.Local:
		parts = append(parts, "on this node, "+ep.Node)
	case ep.Node != "":
		parts = append(parts, "on node "+ep.Node)
	case ep.Local:
		parts = append(parts, "on this node")
	case ep.NodeKnown:
		parts = append(parts, "its EndpointSlice names no node")
	default:
		parts = append(parts, "node unknown")
	}
	parts = append(parts, ep.Conditions...)
	return " (" + strings.Join(parts, ", ") + ")"
}

// commonSteps is how many steps every outcome begins with, and how many
// of the rest every outcome ends with.
func commonSteps(outs []Outcome) (head, tail int) {
	if len(outs) < 2 {
		return 0, 0
	}
	shortest := len(outs[0].Steps)
	for _, o := range outs[1:] {
		shortest = min(shortest, len(o.Steps))
	}
	same := func(i func(o Outcome) int) bool {
		for _, o := range outs[1:] {
			if o.Steps[i(o)] != outs[0].Steps[i(outs[0])] {
				return false
			}
		}
		return true
	}
	for head < shortest && same(func(Outcome) int { return head }) {
		head++
	}
	for head+tail < shortest && same(func(o Outcome) int { return len(o.Steps) - 1 - tail }) {
		tail++
	}
	return head, tail
}

func stepWidth(outs []Outcome) int {
	w := 0
	for _, o := range outs {
		for _, s := range o.Steps {
			w = max(w, len(stepPlace(s)))
		}
	}
	return w
}

func stepPlace(s Step) string { return fmt.Sprintf("%s #%d", s.Chain, s.Rule) }

// writeSteps writes steps one a line, hook, chain and rule, then the rule's
// text, and the element its lookup found below it.
func writeSteps(b *strings.Builder, steps []Step, indent string, width int) {
	for _, s := range steps {
		fmt.Fprintf(b, "%s%-11s  %-*s  %s\n", indent, s.Hook, width, stepPlace(s), s.Text)
		if s.Element != "" {
			fmt.Fprintf(b, "%s%-11s  %-*s    @%s: %s\n", indent, "", width, "", s.Set, s.Element)
		}
	}
}

func writeNotes(b *strings.Builder, notes []string, indent string) {
	if len(notes) == 0 {
		return
	}
	fmt.Fprintf(b, "\n%snotes:\n", indent)
	for _, n := range notes {
		fmt.Fprintf(b, "%s  - %s\n", indent, n)
	}
}

// counterMetric names the /metrics series a counter object is exported as.
func counterMetric(name string) string {
	verdict, reason, ok := nft.CounterReason(name)
	if !ok {
		return "not exported"
	}
	metric := "nftproxy_packets_dropped_total"
	if verdict == "reject" {
		metric = "nftproxy_packets_rejected_total"
	}
	return fmt.Sprintf("%s{reason=%q}", metric, reason)
}
