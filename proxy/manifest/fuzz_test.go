package manifest

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/nftproxy/nftproxy/nft"
	"github.com/nftproxy/nftproxy/proxy/compile"
	"github.com/nftproxy/nftproxy/proxy/model"
)

// FuzzLoad fuzzes the manifest decoder (`nftproxy compile`, `apply` and
// `trace -f` read files anybody may write). Whatever a file holds, loading
// it gives a Result or errors, never both; a Result compiles to tables the
// atomic fake takes whole, as the kernel must. Seeds: testdata/ and
// ../../examples/, and testdata/fuzz/FuzzLoad/.
func FuzzLoad(f *testing.F) {
	for _, glob := range []string{"testdata/*.yaml", "testdata/*.json", "../../examples/*.yaml"} {
		paths, _ := filepath.Glob(glob)
		for _, p := range paths {
			data, err := os.ReadFile(p)
			if err != nil {
				f.Fatal(err)
			}
			f.Add(filepath.Ext(p) == ".json", data)
		}
	}
	f.Fuzz(func(t *testing.T, isJSON bool, data []byte) {
		name := "fuzz.yaml"
		if isJSON {
			name = "fuzz.json"
		}
		res, err := loadBytes(name, data)
		if err != nil {
			if res != nil {
				t.Fatalf("a Result and errors: %v", err)
			}
			return
		}
		again, _ := loadBytes(name, data)
		if !reflect.DeepEqual(res, again) {
			t.Fatal("two loads of the same bytes differ")
		}
		node := model.Node{Name: "node-1"}
		if len(res.Nodes) > 0 {
			node = res.Nodes[0]
		}
		rs, _ := compile.Ruleset(&res.Snapshot, node, compile.DefaultOptions())
		if err := nft.NewFake().Apply(nft.Diff(nil, rs)); err != nil {
			t.Fatalf("the compiled tables do not apply: %v", err)
		}
	})
}

// loadBytes is Load of one file named name holding data.
func loadBytes(name string, data []byte) (*Result, error) {
	l := &loader{seen: map[string]location{}}
	l.loadData(name, data)
	return l.result()
}
