// Package compile turns a model snapshot, the Node and Options into the
// desired nft.Ruleset: one table per IP family.
//
// Tables keep the compiled output Service by Service (a unit each) so that
// a sync after a change recompiles only the changed Services and diffs two
// partial tables that hold just what they touch (Tables.Update, which
// returns the nft.Plan). Ruleset compiles from scratch through the same
// Tables, so the two cannot drift apart. Conflicts between Services (two
// claiming one IP and port) are settled by claims: the first Service in the
// snapshot wins, the others get a Problem.
//
// The compiler is pure: no clock, no I/O, no logging, sorted iteration, so
// that the same input always gives the same tables and plans. The golden
// files in testdata/ hold input manifests and the nft text they compile to
// (go test ./proxy/compile -update rewrites them).
//
// # Table shape
//
// The shape follows the kernel cost model in docs/ruleset.md: a constant
// number of sets and maps, each referenced from a constant number of rules,
// and per-Service logic in per-Service chains where an endpoint is chosen by
// `numgen random` rules instead of an anonymous map per Service. The fixed
// part of every table, its sets, base chains and hooks, is skeleton.go.
package compile
