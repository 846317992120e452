// Package config holds nftproxy's versioned configuration: the types, their
// defaults, loading from a file, validation and writing.
//
// # Formats
//
// nftproxy reads its own kind, apiVersion nftproxy.io/v1alpha1 and kind
// ProxyConfiguration, decoded strictly: an unknown or misspelled field is an
// error naming the field. As a drop-in replacement for kube-proxy it also
// reads an existing kube-proxy file (kubeproxy.config.k8s.io/v1alpha1
// KubeProxyConfiguration) and maps it field by field to ProxyConfiguration.
// That decoding is lenient, like kube-proxy's own: fields nftproxy does not
// use, and unknown fields, become warnings. A proxy mode other than nftables
// is an error, because silently running a different data plane than the one
// the operator asked for is worse than not starting.
//
// # Precedence
//
// defaults < file < flags set explicitly on the command line. Load returns the
// defaults overlaid with the file; the caller then assigns the fields whose
// flag was set explicitly (pflag's Changed) and calls Validate:
//
//	c, warnings, err := config.Load(path) // or config.Default() without a file
//	if err != nil { ... }
//	for _, w := range warnings { logger.Info("Config warning", "warning", w) }
//	if fs.Changed("masquerade-bit") { c.MasqueradeBit = masqueradeBit }
//	if err := config.Validate(c); err != nil { ... } // every error at once
//
// # Validation
//
// Validate reports every problem at once as an ErrorList of path and detail
// pairs, so that an operator fixes a file in one pass instead of one restart
// per mistake. The parsed helpers (ClusterCIDRs, NodePortCIDRs) assume a
// configuration that passed Validate; they skip what they cannot parse.
package config
