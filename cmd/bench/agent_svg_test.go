package main

import (
	"encoding/xml"
	"io"
	"strings"
	"testing"
)

// The picture is drawn from the runs only: every median appears as a
// label, a timed-out cold sync as its bound, and the output is valid XML.
func TestDrawScale(t *testing.T) {
	res := &agentResults{Machine: "test machine", Runs: []agentRun{
		{Proxy: "nftproxy", Size: "1000x10", Cold: 0.4, HWM: 60 << 20},
		{Proxy: "nftproxy", Size: "1000x10", Cold: 0.5, HWM: 62 << 20},
		{Proxy: "nftproxy", Size: "1000x10", Cold: 0.3, HWM: 61 << 20},
		{Proxy: "kube-proxy", Size: "1000x10", Cold: 1.2, HWM: 90 << 20},
		{Proxy: "nftproxy", Size: "20000x10", Cold: 4.5, HWM: 590 << 20},
		{Proxy: "kube-proxy", Size: "20000x10", Cold: 0, ColdTimeout: 600, HWM: 500 << 20},
	}}
	var b strings.Builder
	if err := drawScale(&b, []*agentResults{res}); err != nil {
		t.Fatal(err)
	}
	svg := b.String()
	d := xml.NewDecoder(strings.NewReader(svg))
	for {
		_, err := d.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("not valid XML: %v\n%s", err, svg)
		}
	}
	for _, want := range []string{">400 ms<", ">1.20 s<", ">4.50 s<", "&gt; 600.0 s<", ">61<", ">90<", ">590<", "1000x10, 20000x10", "test machine"} {
		if !strings.Contains(svg, want) {
			t.Errorf("picture lacks %q", want)
		}
	}
}
