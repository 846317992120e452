package config

import (
	"maps"
	"slices"
	"strings"
)

// ignoredKubeProxyFields lists the KubeProxyConfiguration fields nftproxy
// does not read, with the reason told to the operator. An entry covers every
// field below it. TestKubeProxyFieldsCovered checks that every field of the
// type is either mapped by fromKubeProxy or listed here, so that a field added
// by a newer k8s.io/kube-proxy cannot be dropped without a word.
var ignoredKubeProxyFields = []struct{ path, reason string }{
	{"featureGates", "nftproxy has no kube-proxy feature gates"},
	{"logging", "use nftproxy's logging flags"},
	{"bindAddressHardFail", "not supported by nftproxy"},
	{"enableProfiling", "not supported by nftproxy"},
	{"showHiddenMetricsForVersion", "not supported by nftproxy"},
	{"iptables", "nftproxy has no iptables mode"},
	{"ipvs", "nftproxy has no IPVS mode"},
	{"winkernel", "nftproxy runs on Linux only"},
	{"windowsRunAsService", "nftproxy runs on Linux only"},
	{"detectLocal", "nftproxy supports detectLocalMode ClusterCIDR and NodeCIDR only"},
	{"oomScoreAdj", "nftproxy does not change its OOM score"},
	{"configSyncPeriod", "not supported by nftproxy"},
	{"portRange", "unused since kube-proxy's userspace mode was removed"},
	{"conntrack.maxPerCore", "nftproxy does not resize the conntrack table"},
	{"conntrack.min", "nftproxy does not resize the conntrack table"},
	{"conntrack.tcpBeLiberal", "nftproxy does not set this conntrack sysctl"},
	{"conntrack.udpTimeout", "nftproxy does not set this conntrack sysctl"},
	{"conntrack.udpStreamTimeout", "nftproxy does not set this conntrack sysctl"},
}

// ignoredFieldWarnings returns one warning per ignored field that holds a
// value, in raw (the file decoded without a schema); paths in skip are
// already reported as unknown fields.
func ignoredFieldWarnings(raw map[string]any, skip map[string]bool) []string {
	var warnings []string
	for _, f := range ignoredKubeProxyFields {
		v, ok := lookup(raw, f.path)
		if !ok {
			continue
		}
		for _, path := range setLeaves(f.path, v) {
			if !skip[path] {
				warnings = append(warnings, path+": ignored, "+f.reason)
			}
		}
	}
	return warnings
}

// lookup returns the value at a dotted path of nested objects.
func lookup(raw map[string]any, path string) (any, bool) {
	var v any = raw
	for key := range strings.SplitSeq(path, ".") {
		obj, ok := v.(map[string]any)
		if !ok {
			return nil, false
		}
		if v, ok = obj[key]; !ok {
			return nil, false
		}
	}
	return v, true
}

// setLeaves returns the paths at and below path that hold a non-zero value;
// a list counts as one value. Zero values are not reported: kubeadm and
// kube-proxy --write-config-to write every field, mostly as zero (null, "",
// false, 0, "0s"), and kube-proxy treats those as unset.
func setLeaves(path string, v any) []string {
	obj, ok := v.(map[string]any)
	if !ok {
		if isZero(v) {
			return nil
		}
		return []string{path}
	}
	var paths []string
	for _, key := range slices.Sorted(maps.Keys(obj)) {
		paths = append(paths, setLeaves(path+"."+key, obj[key])...)
	}
	return paths
}

func isZero(v any) bool {
	switch v := v.(type) {
	case nil:
		return true
	case bool:
		return !v
	case string:
		// "0" is how a zero resource.Quantity (logging's infoBufferSize) is written.
		return v == "" || v == "0" || v == "0s"
	case int64:
		return v == 0
	case float64:
		return v == 0
	case []any:
		return len(v) == 0
	}
	return false
}
