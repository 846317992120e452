// Command coredns is CoreDNS with only the plugins that the real node's
// Corefile uses (hack/cluster/coredns.yaml, kubeadm's Corefile without
// forward and loop: nothing outside the node answers DNS here). Upstream's
// main imports all of core/plugin, whose cloud-provider plugins would
// multiply the build; a plugin registers itself when imported, and CoreDNS
// orders the registered ones by its own directive list.
package main

import (
	_ "github.com/coredns/caddy/onevent"
	_ "github.com/coredns/coredns/plugin/cache"
	_ "github.com/coredns/coredns/plugin/errors"
	_ "github.com/coredns/coredns/plugin/health"
	_ "github.com/coredns/coredns/plugin/kubernetes"
	_ "github.com/coredns/coredns/plugin/loadbalance"
	_ "github.com/coredns/coredns/plugin/log"
	_ "github.com/coredns/coredns/plugin/metrics"
	_ "github.com/coredns/coredns/plugin/ready"
	_ "github.com/coredns/coredns/plugin/reload"

	"github.com/coredns/coredns/coremain"
)

func main() {
	coremain.Run()
}
