package config

import (
	"fmt"
	"net"
	"net/netip"
	"slices"
	"sort"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	componentbase "k8s.io/component-base/config/v1alpha1"
	kubeproxy "k8s.io/kube-proxy/config/v1alpha1"
	"sigs.k8s.io/json"
)

const kubeProxyKind = "KubeProxyConfiguration"

// decodeKubeProxy reads a kube-proxy KubeProxyConfiguration (already
// converted to JSON) and maps it to our kind. Decoding is lenient, like
// kube-proxy's, which falls back to a non-strict decode with a warning:
// unknown fields and fields nftproxy does not use become warnings, sorted by
// field path. Only what would make nftproxy behave differently from what the
// file asks for (another proxy mode) is an error.
func decodeKubeProxy(js []byte) (*Configuration, []string, error) {
	var kp kubeproxy.KubeProxyConfiguration
	strictErrs, err := json.UnmarshalStrict(js, &kp, json.DisallowUnknownFields)
	if err != nil {
		return nil, nil, fmt.Errorf("decode %s: %w", kubeProxyKind, err)
	}
	var raw map[string]any
	if err := json.UnmarshalCaseSensitivePreserveInts(js, &raw); err != nil {
		return nil, nil, fmt.Errorf("decode %s: %w", kubeProxyKind, err)
	}
	var warnings []string
	unknown := map[string]bool{}
	for _, e := range unknownFields(strictErrs) {
		unknown[e.Path] = true
		warnings = append(warnings, e.Path+": unknown field, ignored")
	}
	warnings = append(warnings, ignoredFieldWarnings(raw, unknown)...)
	c, mapWarnings, errs := fromKubeProxy(&kp)
	warnings = append(warnings, mapWarnings...)
	sort.Strings(warnings)
	if len(errs) > 0 {
		return nil, warnings, errs
	}
	return c, warnings, nil
}

// fromKubeProxy maps kp onto our defaults field by field. kube-proxy's own
// defaulting treats a zero value as unset, and kubeadm writes every field,
// mostly as zero; so a zero value keeps our default wherever kube-proxy would
// have applied its (equal) default.
func fromKubeProxy(kp *kubeproxy.KubeProxyConfiguration) (*Configuration, []string, ErrorList) {
	var errs ErrorList
	switch kp.Mode {
	case "", "nftables":
		// Empty means kube-proxy's default mode; whoever runs nftproxy
		// instead of kube-proxy has chosen nftables.
	default:
		errs.add("mode", "unsupported value %q: nftproxy implements only the nftables mode", kp.Mode)
	}
	c := Default()
	mapNFTables(c, &kp.NFTables)
	c.ClusterCIDR = kp.ClusterCIDR
	if kp.DetectLocalMode != "" {
		c.DetectLocalMode = LocalMode(kp.DetectLocalMode) // Validate rejects the modes we lack
	}
	if len(kp.NodePortAddresses) > 0 {
		c.NodePortAddresses = slices.Clone(kp.NodePortAddresses)
	}
	warnings := mapBindAddresses(c, kp)
	c.HostnameOverride = kp.HostnameOverride
	mapClientConnection(&c.ClientConnection, &kp.ClientConnection)
	c.Conntrack.TCPEstablishedTimeout = kubeProxyTimeout(kp.Conntrack.TCPEstablishedTimeout, 24*time.Hour)
	c.Conntrack.TCPCloseWaitTimeout = kubeProxyTimeout(kp.Conntrack.TCPCloseWaitTimeout, time.Hour)
	return c, warnings, errs
}

// mapNFTables reads the nftables section only: kube-proxy in nftables mode
// ignores the iptables and ipvs sections, and v1alpha1 has no top-level
// syncPeriod, minSyncPeriod or masqueradeAll.
func mapNFTables(c *Configuration, nft *kubeproxy.KubeProxyNFTablesConfiguration) {
	if nft.MinSyncPeriod.Duration != 0 {
		c.MinSyncPeriod = nft.MinSyncPeriod
	}
	if nft.SyncPeriod.Duration != 0 {
		c.SyncPeriod = nft.SyncPeriod
	}
	if nft.MasqueradeBit != nil {
		c.MasqueradeBit = *nft.MasqueradeBit
	}
	c.MasqueradeAll = nft.MasqueradeAll
}

// mapBindAddresses reproduces kube-proxy's defaulting of the server
// addresses: IPv6 defaults when bindAddress is IPv6, and the default port
// appended to a bare IP ("0.0.0.0" becomes "0.0.0.0:10249"), a form many
// kube-proxy ConfigMaps use for metricsBindAddress.
func mapBindAddresses(c *Configuration, kp *kubeproxy.KubeProxyConfiguration) []string {
	var warnings []string
	healthzHost, metricsHost := "0.0.0.0", "127.0.0.1"
	if ip, err := netip.ParseAddr(kp.BindAddress); err == nil {
		if ip.Is6() && !ip.Is4In6() {
			healthzHost, metricsHost = "::", "::1"
		}
		if !ip.IsUnspecified() {
			warnings = append(warnings, "bindAddress: ignored, nftproxy takes the node's primary IPs from the Node object")
		}
	} else if kp.BindAddress != "" {
		warnings = append(warnings, fmt.Sprintf("bindAddress: ignored, %q is not an IP address", kp.BindAddress))
	}
	c.HealthzBindAddress = kubeProxyServerAddress(kp.HealthzBindAddress, healthzHost, defaultHealthzPort)
	c.MetricsBindAddress = kubeProxyServerAddress(kp.MetricsBindAddress, metricsHost, defaultMetricsPort)
	return warnings
}

func kubeProxyServerAddress(s, defaultHost, port string) string {
	if s == "" {
		return net.JoinHostPort(defaultHost, port)
	}
	if _, err := netip.ParseAddr(s); err == nil {
		return net.JoinHostPort(s, port)
	}
	return s
}

func mapClientConnection(cc *ClientConnection, kp *componentbase.ClientConnectionConfiguration) {
	cc.Kubeconfig = kp.Kubeconfig
	cc.AcceptContentTypes = kp.AcceptContentTypes
	if kp.ContentType != "" {
		cc.ContentType = kp.ContentType
	}
	if kp.QPS != 0 {
		cc.QPS = kp.QPS
	}
	if kp.Burst != 0 {
		cc.Burst = kp.Burst
	}
}

// kubeProxyTimeout maps a kube-proxy conntrack TCP timeout. kube-proxy
// defaults an unset one (24h established, 1h close-wait) and writes it to
// the kernel, and takes 0 to mean "leave the kernel's value". Reproducing
// both keeps the node's conntrack timeouts as they were under kube-proxy;
// the CLOSE_WAIT one matters (kubernetes/kubernetes#32551: the kernel's 60s
// drops SNAT state of half-closed connections).
func kubeProxyTimeout(d *metav1.Duration, kubeProxyDefault time.Duration) *metav1.Duration {
	switch {
	case d == nil:
		return &metav1.Duration{Duration: kubeProxyDefault}
	case d.Duration == 0:
		return nil
	}
	return &metav1.Duration{Duration: d.Duration} // a negative one fails Validate
}
