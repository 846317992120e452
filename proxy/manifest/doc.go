// Package manifest reads Kubernetes manifest files for the offline commands
// (nftproxy compile, nftproxy apply) and turns them into a model.Snapshot.
//
// # Input
//
// Each path is a file or a directory; directories are walked recursively for
// files ending in .yaml, .yml or .json. A YAML file holds documents separated
// by "---" lines; a JSON file holds one or more concatenated values. A List
// (kind List, or any kind ending in "List") is expanded into its items.
//
// Only v1 Service, v1 Node, discovery.k8s.io/v1 EndpointSlice and
// networking.k8s.io/v1 ServiceCIDR are read.
// They are decoded strictly, as the API server does (case-sensitive field
// names; unknown and duplicate fields are errors), then validated by
// proxy/kube. Every other object is listed in Result.Skipped.
//
// # Errors
//
// Load reports every problem in every file at once, one line each, naming
// the file, the document when the file has several, the object and the
// field. It never returns a partial Result: an offline compile from a
// half-read cluster would silently drop Services.
package manifest
