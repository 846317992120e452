package kernel

import (
	"fmt"

	"github.com/google/nftables"
)

// google/nftables decodes the sets and chains of a dump itself, and its
// decoders trust the bytes: a set's userdata is read with
// userdata.GetString, which panics on an entry that claims more bytes than
// there are (v0.3.1-0.20251119083706), and a chain message shorter than its
// 4-byte header panics too. Anybody with CAP_NET_ADMIN may write a set's
// userdata in our table, so a panic there would crash the agent each time
// it reads the table back. The calls below turn such a panic into an
// error: the sync fails, and the next one, from unknown state, replaces our
// tables whole without reading them (FuzzSet, FuzzChain keep the inputs).

// getSets is conn.GetSets with the library's panics as errors.
func getSets(conn *nftables.Conn, t *nftables.Table) ([]*nftables.Set, error) {
	return guard("sets", func() ([]*nftables.Set, error) { return conn.GetSets(t) })
}

// listChains is conn.ListChainsOfTableFamily with the library's panics as
// errors.
func listChains(conn *nftables.Conn, f nftables.TableFamily) ([]*nftables.Chain, error) {
	return guard("chains", func() ([]*nftables.Chain, error) { return conn.ListChainsOfTableFamily(f) })
}

func guard[T any](what string, fn func() (T, error)) (out T, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("google/nftables failed to decode the %s the kernel sent: %v", what, r)
		}
	}()
	return fn()
}
