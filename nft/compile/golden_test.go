package compile_test

import (
	"flag"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/tools/txtar"
	"sigs.k8s.io/yaml"

	"github.com/nftproxy/nftproxy/nft/compile"
	"github.com/nftproxy/nftproxy/proxy/manifest"
)

var update = flag.Bool("update", false, "rewrite the want sections of testdata/*.txtar")

// goldenOptions is the optional options.yaml section of a golden file.
type goldenOptions struct {
	MasqueradeAll     bool     `json:"masqueradeAll"`
	MasqueradeBit     *int     `json:"masqueradeBit"`
	LocalCIDRs        []string `json:"localCIDRs"`
	NodePortAddresses []string `json:"nodePortAddresses"`
}

// TestGolden compiles the manifests of each testdata/*.txtar file and
// compares the nft text (want.nft) and the skipped objects (problems.txt).
func TestGolden(t *testing.T) {
	files, err := filepath.Glob("testdata/*.txtar")
	if err != nil || len(files) == 0 {
		t.Fatalf("no golden files: %v", err)
	}
	for _, file := range files {
		t.Run(strings.TrimSuffix(filepath.Base(file), ".txtar"), func(t *testing.T) {
			runGolden(t, file)
		})
	}
}

func runGolden(t *testing.T, file string) {
	ar, err := txtar.ParseFile(file)
	if err != nil {
		t.Fatal(err)
	}
	sections := map[string]string{}
	for _, f := range ar.Files {
		sections[f.Name] = string(f.Data)
	}
	got, problems := compileSection(t, sections["input.yaml"], sections["options.yaml"])
	if *update {
		writeGolden(t, file, ar, got, problems)
		return
	}
	if diff := cmp.Diff(sections["want.nft"], got); diff != "" {
		t.Errorf("nft text (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(sections["problems.txt"], problems); diff != "" {
		t.Errorf("problems (-want +got):\n%s", diff)
	}
}

func compileSection(t *testing.T, input, options string) (text, problems string) {
	path := filepath.Join(t.TempDir(), "input.yaml")
	if err := os.WriteFile(path, []byte(input), 0o644); err != nil {
		t.Fatal(err)
	}
	res, err := manifest.Load([]string{path})
	if err != nil {
		t.Fatalf("load input: %v", err)
	}
	if len(res.Nodes) != 1 {
		t.Fatalf("input must have exactly one Node, has %d", len(res.Nodes))
	}
	rs, probs := compile.Ruleset(&res.Snapshot, res.Nodes[0], parseOptions(t, options))
	var b strings.Builder
	for _, p := range probs {
		b.WriteString(p.Error() + "\n")
	}
	return rs.Text(), b.String()
}

func parseOptions(t *testing.T, text string) compile.Options {
	var g goldenOptions
	if err := yaml.UnmarshalStrict([]byte(text), &g); err != nil {
		t.Fatalf("options.yaml: %v", err)
	}
	o := compile.DefaultOptions()
	o.MasqueradeAll = g.MasqueradeAll
	if g.MasqueradeBit != nil {
		o.MasqueradeBit = *g.MasqueradeBit
	}
	for _, c := range g.LocalCIDRs {
		o.LocalCIDRs = append(o.LocalCIDRs, netip.MustParsePrefix(c))
	}
	for _, c := range g.NodePortAddresses {
		o.NodePortAddresses = append(o.NodePortAddresses, netip.MustParsePrefix(c))
	}
	return o
}

func writeGolden(t *testing.T, file string, ar *txtar.Archive, text, problems string) {
	var files []txtar.File
	for _, f := range ar.Files {
		if f.Name != "want.nft" && f.Name != "problems.txt" {
			files = append(files, f)
		}
	}
	files = append(files, txtar.File{Name: "want.nft", Data: []byte(text)})
	if problems != "" {
		files = append(files, txtar.File{Name: "problems.txt", Data: []byte(problems)})
	}
	ar.Files = files
	if err := os.WriteFile(file, txtar.Format(ar), 0o644); err != nil {
		t.Fatal(err)
	}
}
