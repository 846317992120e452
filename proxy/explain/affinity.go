package explain

import (
	"fmt"
	"time"

	"github.com/nftproxy/nftproxy/nft"
	"github.com/nftproxy/nftproxy/nft/trace"
)

// affinityOf says what session affinity does with outcome steps: a rule
// that records the choice in the affinity set (update @affinity { ...
// timeout T }) makes it remembered for T; a rule that found the client
// there sent it back to its endpoint.
func (x *explainer) affinityOf(steps []trace.Step) *Affinity {
	var a *Affinity
	for _, s := range steps {
		r := rule(x.t, s.Chain, s.Rule)
		if r == nil {
			continue
		}
		for _, st := range r.Stmts {
			if u, ok := st.(nft.UpdateSet); ok && u.Set == nft.SetAffinity {
				a = &Affinity{TimeoutSeconds: u.Timeout}
			}
		}
		if a != nil && s.Set == nft.SetAffinity {
			a.Remembered = true
			a.ExpiresInSeconds = x.expires(s.Element)
		}
	}
	if a == nil {
		return nil
	}
	x.affinity = true
	a.Text = affinityText(x.src, a)
	return a
}

// expires is how long the kernel's memory element e has left, in seconds;
// 0 when the memory was not read.
func (x *explainer) expires(e nft.Element) uint32 {
	if len(e.Key) != 2 {
		return 0
	}
	for _, m := range x.o.Memory {
		if m.Client == e.Key[0].Addr && m.ID == e.Key[1].Num {
			return uint32(m.Expires.Round(time.Second) / time.Second)
		}
	}
	return 0
}

func affinityText(client fmt.Stringer, a *Affinity) string {
	timeout := seconds(a.TimeoutSeconds)
	if !a.Remembered {
		return fmt.Sprintf("sessionAffinity: ClientIP: the endpoint picked is remembered for %s after %s's last new connection "+
			"to this Service port; its new connections until then go back to it, through any of the port's addresses", timeout, client)
	}
	text := fmt.Sprintf("sessionAffinity: ClientIP: %s is remembered with this endpoint", client)
	if a.ExpiresInSeconds > 0 {
		text += fmt.Sprintf(" for another %s", seconds(a.ExpiresInSeconds))
	}
	return text + fmt.Sprintf("; each new connection renews the memory for %s", timeout)
}

func seconds(s uint32) string { return (time.Duration(s) * time.Second).String() }

// AffinitySet is the name of the dynamic set that holds the
// session-affinity memory, for reading it from the kernel.
const AffinitySet = nft.SetAffinity

// RememberedOf reads an element of the affinity set: a client and the ID
// of the endpoint it was sent to, with the time the memory has left.
func RememberedOf(e nft.Element, expires time.Duration) (Remembered, bool) {
	if len(e.Key) != 2 || !e.Key[0].Addr.IsValid() {
		return Remembered{}, false
	}
	return Remembered{Client: e.Key[0].Addr, ID: e.Key[1].Num, Expires: expires}, true
}
