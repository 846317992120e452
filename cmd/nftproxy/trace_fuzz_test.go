package main

import (
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/nftproxy/nftproxy/nft"
	"github.com/nftproxy/nftproxy/proxy/explain"
)

// FuzzTraceArgs fuzzes what `nftproxy trace` makes of its address, port
// and protocol arguments, through to the explainer, over what examples/
// compiles to. Whatever they hold, trace answers or refuses them as bad
// input (exit code 2, naming the flag): it never fails otherwise, and an
// address it accepts is one it can print back. Seeds: the addresses of
// docs/trace.md's examples, and testdata/fuzz/FuzzTraceArgs/.
func FuzzTraceArgs(f *testing.F) {
	flags := traceFlags{manifests: manifestFlags{files: []string{"../../examples"}}}
	src, err := flags.tables(io.Discard)
	if err != nil {
		f.Fatal(err)
	}
	for _, seed := range [][3]string{
		{"10.244.1.9", "10.96.0.10:80", "tcp"},
		{"203.0.113.7:40000", "198.51.100.1:30080", "tcp"},
		{"", "[fd00:10:96::10]:53", "udp"},
		{"::ffff:10.244.1.9", "[::ffff:10.96.0.10]:80", "sctp"},
		{"10.244.1.9:99999", "10.96.0.10:0", "icmp"},
	} {
		f.Add(seed[0], seed[1], seed[2])
	}
	f.Fuzz(func(t *testing.T, srcArg, dstArg, proto string) {
		tf := traceFlags{src: srcArg, dst: dstArg, proto: proto, output: "text"}
		if err := tf.check(true); err != nil {
			mustBeBadInput(t, err)
			return
		}
		r, err := tf.request()
		if err != nil {
			mustBeBadInput(t, err)
			return
		}
		if r.Dst.Port() == 0 || r.Dst.Addr().Is4In6() || r.Src.Is4In6() {
			t.Fatalf("request %+v from --src %q --dst %q: a port 0 or a mapped address", r, srcArg, dstArg)
		}
		table := src.rs[nft.FamilyOf(r.Dst.Addr())]
		if table == nil {
			return // a family the examples have no table of
		}
		rep, err := explain.Trace(table, r, src.opts)
		if err != nil {
			mustBeBadInput(t, requestError(err))
			return
		}
		var b strings.Builder
		if err := rep.Text(&b); err != nil {
			t.Fatalf("text: %v", err)
		}
	})
}

func mustBeBadInput(t *testing.T, err error) {
	t.Helper()
	var e *exitError
	if !errors.As(err, &e) || e.code != exitBadInput {
		t.Fatalf("not a bad-input error: %v", err)
	}
}
