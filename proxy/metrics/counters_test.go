package metrics

import (
	"errors"
	"io"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/nftproxy/nftproxy/nft"
)

// TestCountPackets: each counter of our tables is exported under its
// verdict's metric with its reason and family; a counter of another form is
// not, and a family whose read fails fails the scrape instead of reporting
// zeros.
func TestCountPackets(t *testing.T) {
	for _, tc := range []struct {
		name string
		read CounterReader
		want []string
		code int
	}{{
		name: "both families",
		read: func(f nft.Family) ([]PacketCount, error) {
			if f == nft.IPv6 {
				return []PacketCount{{Name: nft.CounterRejectNoEndpoints, Packets: 2}}, nil
			}
			return []PacketCount{{Name: nft.CounterDropSourceRange, Packets: 7}, {Name: nft.CounterRejectNoEndpoints},
				{Name: "someone-elses"}}, nil
		},
		want: []string{
			`nftproxy_packets_dropped_total{ip_family="IPv4",reason="source-range"} 7`,
			`nftproxy_packets_rejected_total{ip_family="IPv4",reason="no-endpoints"} 0`,
			`nftproxy_packets_rejected_total{ip_family="IPv6",reason="no-endpoints"} 2`,
		},
		code: 200,
	}, {
		name: "a read fails",
		read: func(nft.Family) ([]PacketCount, error) { return nil, errors.New("netlink: no buffer space") },
		code: 500,
	}} {
		t.Run(tc.name, func(t *testing.T) {
			m := New()
			m.CountPackets(tc.read)
			rec := httptest.NewRecorder()
			m.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
			body, _ := io.ReadAll(rec.Body)
			var got []string
			for _, line := range strings.Split(string(body), "\n") {
				if strings.HasPrefix(line, "nftproxy_packets_") {
					got = append(got, line)
				}
			}
			if rec.Code != tc.code {
				t.Errorf("GET /metrics: %d, want %d\n%s", rec.Code, tc.code, body)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("counter series (-want +got):\n%s", diff)
			}
		})
	}
}
