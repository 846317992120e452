package compile

import (
	"github.com/nftproxy/nftproxy/nft"
	"github.com/nftproxy/nftproxy/proxy/model"
)

// policyChains names the endpoint chains of one Service port: "" when the
// chain does not exist because no traffic may use it.
type policyChains struct {
	cluster  string // every usable endpoint (externalTrafficPolicy or internalTrafficPolicy Cluster)
	local    string // the endpoints on this node (a policy is Local)
	internal string // where ClusterIP traffic goes: cluster, or local for internalTrafficPolicy Local
}

func (p portRef) localChain() string { return "local-" + p.chainSuffix() }

// policyChains adds the endpoint chains of ref's port and returns their
// names.
func (c *compiler) policyChains(b *builder, ref portRef, sets endpointSets) policyChains {
	var pc policyChains
	aff := affinity{seconds: uint32(max(ref.svc.AffinitySeconds, 0)), port: ref.chainSuffix()}
	if len(sets.cluster) > 0 {
		pc.cluster = ref.serviceChain()
		b.chains = append(b.chains, aff.chains(pc.cluster, ref.proto, sets.cluster)...)
	}
	if len(sets.local) > 0 {
		pc.local = ref.localChain()
		b.chains = append(b.chains, aff.chains(pc.local, ref.proto, sets.local)...)
	}
	pc.internal = pc.cluster
	if ref.svc.InternalLocal {
		pc.internal = pc.local
	}
	return pc
}

// externalRules are the rules of the chain NodePort, externalIP and
// load-balancer traffic of ref's port enters by (see entryRules).
func (c *compiler) externalRules(f nft.Family, ref portRef, pc policyChains) []nft.Rule {
	return entryRules(f, c.opts, ref.svc.ExternalLocal, pc.cluster, pc.local)
}

// countNoLocal counts a port of svc that has endpoints, none on this node,
// under each of its traffic policies that is Local (kube-proxy's
// sync_proxy_rules_no_local_endpoints_total).
func (b *builder) countNoLocal(svc *model.Service) {
	if svc.InternalLocal {
		b.noLocal[0]++
	}
	if svc.ExternalLocal {
		b.noLocal[1]++
	}
}
