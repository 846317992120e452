package compile_test

import (
	"testing"

	"github.com/nftproxy/nftproxy/proxy/compile"
	"github.com/nftproxy/nftproxy/proxy/model/synth"
)

// BenchmarkCompile compiles 10,000 Services x 10 endpoints from scratch.
func BenchmarkCompile(b *testing.B) {
	snap := synth.Plain(10000, 10)
	for b.Loop() {
		compile.Ruleset(snap, testNode, compile.DefaultOptions())
	}
}
