package explain_test

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/nftproxy/nftproxy/nft"
	"github.com/nftproxy/nftproxy/proxy/explain"
)

var update = flag.Bool("update", false, "rewrite testdata/*.txt")

// TestText: the text of reports, against testdata/*.txt (-update rewrites
// them; review the diff).
func TestText(t *testing.T) {
	for _, tc := range []struct {
		golden, fixture string
		r               explain.Request
		service         string
	}{
		{golden: "clusterip-pod", fixture: "nodeport", r: request("10.244.3.3", "10.96.0.20:80", "tcp", "")},
		{golden: "nodeport-etp-local-drop", fixture: "etp-local", r: request("192.0.2.7", "198.51.100.1:30053", "udp", "")},
		{golden: "source-range-drop", fixture: "source-ranges", r: request("203.0.113.7", "203.0.113.30:443", "tcp", "")},
		{golden: "affinity", fixture: "affinity", r: request("10.244.9.9", "10.96.0.60:80", "tcp", "")},
		{golden: "service-etp-local", fixture: "etp-local", service: "demo/lb"},
	} {
		t.Run(tc.golden, func(t *testing.T) {
			fx, rs := load(t, tc.fixture)
			var text bytes.Buffer
			var v any
			if tc.service != "" {
				rep, err := explain.Service(rs, tc.service, withCluster(fx))
				if err != nil {
					t.Fatal(err)
				}
				v = rep
				err = rep.Text(&text)
				if err != nil {
					t.Fatal(err)
				}
			} else {
				rep, err := explain.Trace(rs[nft.FamilyOf(tc.r.Dst.Addr())], tc.r, withCluster(fx))
				if err != nil {
					t.Fatal(err)
				}
				v = rep
				if err := rep.Text(&text); err != nil {
					t.Fatal(err)
				}
			}
			if _, err := json.Marshal(v); err != nil {
				t.Fatal(err)
			}
			path := filepath.Join("testdata", tc.golden+".txt")
			if *update {
				if err := os.WriteFile(path, text.Bytes(), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(string(want), text.String()); diff != "" {
				t.Errorf("%s (-want +got):\n%s", path, diff)
			}
		})
	}
}
