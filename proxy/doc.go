// Package proxy is the Kubernetes side of nftproxy: what reads the
// cluster and decides what the tables must say. It holds no code itself;
// its packages, from the bottom up:
//
//   - model: the value types every layer shares (Services, endpoints,
//     the Node), free of API machinery.
//   - kube, manifest: API objects and manifest files into the model, with
//     field-path errors.
//   - tracker: recorded changes and the snapshots the compiler reads.
//   - compile: a snapshot, the Node and options into desired nft tables.
//   - explain: nftproxy trace's words for what nft/trace found.
//   - dataplane: one sync, mirrored, planned and applied through
//     nft/kernel, and repaired when someone else touches the table.
//   - agent: informers, the sync loop, and the compiler options made from
//     the configuration and the Node; runner rate-limits its syncs.
//   - healthz, metrics, events, conntrack, healthcheck: what a sync
//     reports to, or cleans up after it.
//
// Dependencies point down: proxy imports nft, and nothing under nft
// imports proxy.
package proxy
