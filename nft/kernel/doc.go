// Package kernel is the netlink applier and reader of our nftables tables:
// it commits nft.Plans to the kernel of one network namespace, one batch
// (one atomic transaction) per plan, sealed with the ruleset generation the
// plan was made from, and reads our tables back into nft.Rulesets. It is
// the only package that speaks nftables netlink (proxy/conntrack speaks
// ctnetlink).
//
// # Writing
//
// Apply writes the batch itself (batch.go, message.go): rule messages are
// encoded here, without the echo google/nftables asks for; tables, sets,
// chains and elements are marshalled by google/nftables into a captured
// buffer and copied into the batch in plan order. The batch goes out in one
// sendmsg on a socket of our own.
//
// # Encoding
//
// Every nft.Stmt is encoded as nft 1.0 would encode the same text (see
// `nft --debug=netlink`), so that `nft list table` prints our rules exactly
// as `nftproxy compile` does. The decoder reverses exactly that encoding and
// nothing else: a rule that does not decode (someone else wrote it, or
// changed a register, a flag or a length of ours) comes back as
// nft.Foreign, which never equals a desired rule, so the chain is rewritten
// by the next sync. The round trip and that strictness are tested without
// root (codec_test.go).
//
// # Reading
//
// Read lists sets and chains through google/nftables and dumps rules and
// elements on sockets of its own (dump.go), one dump per chain. Rules and
// elements are decoded by walking their attributes in place (walkAttrs),
// not through mdlayher/netlink's AttributeDecoder, which copies every
// attribute it walks: an element took 1.2 µs and 13 allocations that way
// and takes 0.25 µs and 2 now (BenchmarkAppendElements), which is what a
// read-back or the announcements of a flushed map of 100,000 elements
// spend their time on. An element dump that repeats an element (its set's
// table was resized under it) is dumped again (readElements).
//
// # Notifications
//
// Subscribe (notify.go) joins the NFNLGRP_NFTABLES multicast group on a
// socket of its own and turns the kernel's announcements of every committed
// transaction into nft.Commits: the changes to our tables, elements decoded
// against the sets' definitions as the kernel holds them, and the
// generation. Transactions from our batch socket are skipped by port ID;
// around a large one of ours (and around every stream, a first sync)
// Apply or ApplyStream leaves the group, so that the kernel does not build
// an announcement per element, and reports a loss if the
// generation shows somebody else committed meanwhile. An overflow of the
// receive buffer (ENOBUFS) is reported as a loss too.
package kernel
