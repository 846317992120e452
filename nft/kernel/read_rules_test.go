package kernel

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/mdlayher/netlink"
	"golang.org/x/sys/unix"
)

func TestWalkAttrs(t *testing.T) {
	type attr struct {
		Type    uint16
		Payload string
	}
	good, err := netlink.MarshalAttributes([]netlink.Attribute{
		{Type: unix.NFTA_RULE_TABLE, Data: []byte("kube-proxy\x00")},
		{Type: unix.NLA_F_NESTED | unix.NFTA_RULE_EXPRESSIONS, Data: []byte{1, 2, 3}}, // padded to 4
		{Type: unix.NFTA_RULE_USERDATA, Data: nil},
	})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		in      []byte
		want    []attr
		wantErr bool
	}{
		{"empty", nil, nil, false},
		{"attributes, flags cleared, padding skipped", good, []attr{
			{unix.NFTA_RULE_TABLE, "kube-proxy\x00"}, {unix.NFTA_RULE_EXPRESSIONS, "\x01\x02\x03"}, {unix.NFTA_RULE_USERDATA, ""},
		}, false},
		{"length beyond the buffer", []byte{9, 0, 1, 0, 'a'}, nil, true},
		{"length below the header", []byte{2, 0, 1, 0}, nil, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var got []attr
			err := walkAttrs(tc.in, func(typ uint16, payload []byte) error {
				got = append(got, attr{typ, string(payload)})
				return nil
			})
			if (err != nil) != tc.wantErr {
				t.Fatalf("error %v, want error %v", err, tc.wantErr)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("attributes (-want +got):\n%s", diff)
			}
		})
	}
	if got := attrString([]byte("chain\x00")); got != "chain" {
		t.Errorf("attrString = %q, want %q", got, "chain")
	}
}
