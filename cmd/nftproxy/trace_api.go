package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"time"

	discoveryv1 "k8s.io/api/discovery/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/nftproxy/nftproxy/nft/compile"
	"github.com/nftproxy/nftproxy/nft/explain"
	"github.com/nftproxy/nftproxy/proxy"
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
		src.desired, _ = compile.Ruleset(snap, node, proxy.CompilerOptions(cfg, node))
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
// nodeName. A Service that is missing or not nftproxy's to program leaves
// the snapshot without it, with a warning.
func fetchService(ctx context.Context, c kubernetes.Interface, ns, name, nodeName string, stderr io.Writer) (*model.Snapshot, model.Node, error) {
	snap := &model.Snapshot{}
	svc, err := c.CoreV1().Services(ns).Get(ctx, name, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		fmt.Fprintf(stderr, "warning: the API server has no Service %s/%s\n", ns, name)
	case err != nil:
		return nil, model.Node{}, fmt.Errorf("get Service %s/%s: %w", ns, name, err)
	case kube.ServiceSkipReason(svc) != "":
		fmt.Fprintf(stderr, "warning: Service %s/%s is not for nftproxy to program: %s\n", ns, name, kube.ServiceSkipReason(svc))
	default:
		if m, err := kube.ConvertService(svc); err != nil {
			fmt.Fprintf(stderr, "warning: %v\n", err)
		} else {
			snap.Services = append(snap.Services, *m)
		}
	}
	if err := fetchSlices(ctx, c, ns, name, snap, stderr); err != nil {
		return nil, model.Node{}, err
	}
	n, err := c.CoreV1().Nodes().Get(ctx, nodeName, metav1.GetOptions{})
	if err != nil {
		return nil, model.Node{}, fmt.Errorf("get Node %q (this node; --node-name names another): %w", nodeName, err)
	}
	node, err := kube.ConvertNode(n)
	if err != nil {
		return nil, model.Node{}, err
	}
	return snap, *node, nil
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
