package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/nftproxy/nftproxy/proxy/agent"
	"github.com/nftproxy/nftproxy/proxy/compile"
	"github.com/nftproxy/nftproxy/proxy/explain"
	"github.com/nftproxy/nftproxy/proxy/kube"
	"github.com/nftproxy/nftproxy/proxy/model"
)

// apiTimeout bounds the API server requests of one trace.
const apiTimeout = 15 * time.Second

// apiLookup returns the lookup that asks the API server for one Service,
// its EndpointSlices and this node's Node, names the endpoints' nodes from
// them and compiles them to compare with.
func (f *traceFlags) apiLookup(src *traceTables) func(ns, name string, stderr io.Writer) error {
	return func(ns, name string, stderr io.Writer) error {
		cfg, err := loadConfig(f.manifests.config, stderr)
		if err != nil {
			return err
		}
		client, err := f.apiClient()
		if err != nil {
			return err
		}
		nodeName := f.manifests.nodeName
		if nodeName == "" {
			nodeName = os.Getenv("NODE_NAME") // the DaemonSet sets it
		}
		if nodeName == "" {
			if nodeName, err = cfg.NodeName(); err != nil {
				return err
			}
		}
		ctx, cancel := context.WithTimeout(context.Background(), apiTimeout)
		defer cancel()
		snap, node, err := fetchService(ctx, client, ns, name, nodeName, stderr)
		if err != nil {
			return err
		}
		src.opts.Cluster, src.opts.PodCIDRs = &explain.Cluster{Snapshot: snap, Node: node.Name}, node.PodCIDRs
		src.desired, _ = compile.Ruleset(snap, node, agent.CompilerOptions(cfg, node))
		src.against = "api-server"
		return nil
	}
}

func (f *traceFlags) apiClient() (kubernetes.Interface, error) {
	var rc *rest.Config
	var err error
	if f.inCluster {
		rc, err = rest.InClusterConfig()
	} else {
		rc, err = clientcmd.BuildConfigFromFlags("", f.kubeconfig)
	}
	if err != nil {
		return nil, fmt.Errorf("API server client config: %w", err)
	}
	rc.UserAgent = "nftproxy-trace/" + version
	return kubernetes.NewForConfig(rc)
}

// fetchService reads Service ns/name, its EndpointSlices and Node
// nodeName. It lists with a field selector rather than gets: the
// DaemonSet's ClusterRole grants list and watch only. A Service that is
// missing or not nftproxy's to program leaves the snapshot without it, with
// a warning.
func fetchService(ctx context.Context, c kubernetes.Interface, ns, name, nodeName string, stderr io.Writer) (*model.Snapshot, model.Node, error) {
	snap := &model.Snapshot{}
	svcs, err := c.CoreV1().Services(ns).List(ctx, byName(name))
	if err != nil {
		return nil, model.Node{}, fmt.Errorf("list Service %s/%s: %w", ns, name, err)
	}
	if len(svcs.Items) == 0 {
		fmt.Fprintf(stderr, "warning: the API server has no Service %s/%s\n", ns, name)
	}
	for i := range svcs.Items {
		if m := convertService(&svcs.Items[i], stderr); m != nil {
			snap.Services = append(snap.Services, *m)
		}
	}
	if err := fetchSlices(ctx, c, ns, name, snap, stderr); err != nil {
		return nil, model.Node{}, err
	}
	nodes, err := c.CoreV1().Nodes().List(ctx, byName(nodeName))
	if err != nil {
		return nil, model.Node{}, fmt.Errorf("list Node %q: %w", nodeName, err)
	}
	if len(nodes.Items) == 0 {
		return nil, model.Node{}, fmt.Errorf("--node-name: no Node %q in the API server (this node's name: --node-name, $NODE_NAME, or the hostname)", nodeName)
	}
	node, err := kube.ConvertNode(&nodes.Items[0])
	if err != nil {
		return nil, model.Node{}, err
	}
	return snap, *node, nil
}

func byName(name string) metav1.ListOptions {
	return metav1.ListOptions{FieldSelector: fields.OneTermEqualSelector("metadata.name", name).String()}
}

// convertService converts svc, or warns why it is not programmed.
func convertService(svc *corev1.Service, stderr io.Writer) *model.Service {
	if reason := kube.ServiceSkipReason(svc); reason != "" {
		fmt.Fprintf(stderr, "warning: Service %s/%s is not for nftproxy to program: %s\n", svc.Namespace, svc.Name, reason)
		return nil
	}
	m, err := kube.ConvertService(svc)
	if err != nil {
		fmt.Fprintf(stderr, "warning: %v\n", err)
	}
	return m
}

func fetchSlices(ctx context.Context, c kubernetes.Interface, ns, name string, snap *model.Snapshot, stderr io.Writer) error {
	list, err := c.DiscoveryV1().EndpointSlices(ns).List(ctx, metav1.ListOptions{LabelSelector: discoveryv1.LabelServiceName + "=" + name})
	if err != nil {
		return fmt.Errorf("list EndpointSlices of %s/%s: %w", ns, name, err)
	}
	for i := range list.Items {
		m, err := kube.ConvertSlice(&list.Items[i])
		switch {
		case err != nil:
			fmt.Fprintf(stderr, "warning: %v\n", err)
		case m != nil:
			snap.Slices = append(snap.Slices, *m)
		}
	}
	return nil
}
