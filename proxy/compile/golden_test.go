package compile_test

import (
	"flag"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/nftproxy/nftproxy/proxy/compile/fixture"
)

var update = flag.Bool("update", false, "rewrite the want sections of testdata/*.txtar")

// TestGolden compiles the manifests of each testdata/*.txtar file and
// compares the nft text (want.nft) and the skipped objects (problems.txt).
func TestGolden(t *testing.T) {
	fixtures, err := fixture.All()
	if err != nil {
		t.Fatal(err)
	}
	for _, fx := range fixtures {
		t.Run(fx.Name(), func(t *testing.T) {
			rs, probs := fx.Compile()
			var b strings.Builder
			for _, p := range probs {
				b.WriteString(p.Error() + "\n")
			}
			got, problems := rs.Text(), b.String()
			if *update {
				if err := fx.Rewrite(got, problems); err != nil {
					t.Fatal(err)
				}
				return
			}
			if diff := cmp.Diff(fx.Sections["want.nft"], got); diff != "" {
				t.Errorf("nft text (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(fx.Sections["problems.txt"], problems); diff != "" {
				t.Errorf("problems (-want +got):\n%s", diff)
			}
		})
	}
}
