// Package kernel is the netlink applier: it commits nft.Plans to the kernel
// through github.com/google/nftables, one batch (one atomic transaction) per
// plan, and reads our tables back into nft.Rulesets. It is the only package
// that speaks netlink.
//
// # Encoding
//
// Every nft.Stmt is encoded as nft 1.0 would encode the same text (see
// `nft --debug=netlink`), so that `nft list table` prints our rules exactly
// as `nftproxy compile` does; decode.go reverses the encoding for Read. A
// rule that does not decode (someone else wrote it) comes back as an
// unknown statement, which never equals a desired rule, so the chain is
// rewritten by the next sync.
package kernel
