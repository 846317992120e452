package agent

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	networkingv1 "k8s.io/api/networking/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes/scheme"
	k8stesting "k8s.io/client-go/testing"

	"github.com/nftproxy/nftproxy/nft"
	"github.com/nftproxy/nftproxy/proxy/explain"
)

// apply creates or updates every object of the named sections.
func (s *scenario) apply(names []string) error {
	for _, name := range names {
		data, err := s.file(name)
		if err != nil {
			return err
		}
		objs, err := decodeObjects(data)
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		for _, obj := range objs {
			if err := s.write(obj); err != nil {
				return fmt.Errorf("%s: %w", name, err)
			}
		}
	}
	return nil
}

// decodeObjects decodes a YAML stream of API objects.
func decodeObjects(data []byte) ([]runtime.Object, error) {
	r := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
	var objs []runtime.Object
	for {
		doc, err := r.Read()
		if errors.Is(err, io.EOF) {
			return objs, nil
		}
		if err != nil {
			return nil, err
		}
		if len(bytes.TrimSpace(doc)) == 0 {
			continue
		}
		obj, _, err := scheme.Codecs.UniversalDeserializer().Decode(doc, nil, nil)
		if err != nil {
			return nil, err
		}
		objs = append(objs, obj)
	}
}

// write creates obj, or updates it when it exists.
func (s *scenario) write(obj runtime.Object) error {
	ctx, c := context.Background(), s.client
	var err error
	switch o := obj.(type) {
	case *corev1.Service:
		err = upsert(ctx, c.CoreV1().Services(o.Namespace), o)
	case *discoveryv1.EndpointSlice:
		err = upsert(ctx, c.DiscoveryV1().EndpointSlices(o.Namespace), o)
	case *corev1.Node:
		if o.Name != s.nodeName() {
			return fmt.Errorf("node %s: the agent runs as %s", o.Name, s.nodeName())
		}
		err = upsert(ctx, c.CoreV1().Nodes(), o)
	case *networkingv1.ServiceCIDR:
		err = upsert(ctx, c.NetworkingV1().ServiceCIDRs(), o)
	default:
		return fmt.Errorf("%T: the agent watches no such objects", obj)
	}
	if err == nil {
		s.writes++
	}
	return err
}

// typedClient is what upsert needs of a typed client-go client.
type typedClient[T any] interface {
	Create(context.Context, T, metav1.CreateOptions) (T, error)
	Update(context.Context, T, metav1.UpdateOptions) (T, error)
}

func upsert[T any](ctx context.Context, c typedClient[T], obj T) error {
	_, err := c.Create(ctx, obj, metav1.CreateOptions{})
	if apierrors.IsAlreadyExists(err) {
		_, err = c.Update(ctx, obj, metav1.UpdateOptions{})
	}
	return err
}

// delete deletes one object: KIND NAMESPACE/NAME, or KIND NAME for a Node
// or ServiceCIDR.
func (s *scenario) delete(args []string) error {
	if len(args) != 2 {
		return errors.New("want delete KIND NAMESPACE/NAME")
	}
	ctx, c, opts := context.Background(), s.client, metav1.DeleteOptions{}
	ns, name, _ := strings.Cut(args[1], "/")
	var err error
	switch args[0] {
	case "service":
		err = c.CoreV1().Services(ns).Delete(ctx, name, opts)
	case "endpointslice":
		err = c.DiscoveryV1().EndpointSlices(ns).Delete(ctx, name, opts)
	case "node":
		err = c.CoreV1().Nodes().Delete(ctx, args[1], opts)
	case "servicecidr":
		err = c.NetworkingV1().ServiceCIDRs().Delete(ctx, args[1], opts)
	default:
		return fmt.Errorf("unknown kind %q", args[0])
	}
	if err == nil {
		s.writes++
	}
	return err
}

func (s *scenario) nodeName() string { return "node-1" }

// watchesStarted makes the fake clientset report each watch it starts: it
// drops changes made between an informer's list and its watch, so the
// script changes objects only once every watch runs.
func watchesStarted(s *scenario) <-chan string {
	ch := make(chan string, 10)
	s.client.PrependWatchReactor("*", func(a k8stesting.Action) (bool, watch.Interface, error) {
		select { // reactors run under the fake's lock: never block
		case ch <- a.GetResource().Resource:
		default:
		}
		return false, nil, nil
	})
	return ch
}

// trace explains a packet, or a Service's entries, over the kernel's
// tables as `nftproxy trace` does, with the agent's last snapshot as the
// cluster.
func (s *scenario) trace(args []string) (string, error) {
	fs := flag.NewFlagSet("trace", flag.ContinueOnError)
	src := fs.String("src", "", "")
	dst := fs.String("dst", "", "")
	proto := fs.String("proto", "tcp", "")
	from := fs.String("from", "", "")
	service := fs.String("service", "", "")
	fs.SetOutput(io.Discard)
	if err := fs.Parse(args); err != nil {
		return "", err
	}
	s.agent.mu.Lock()
	node := s.agent.node
	s.agent.mu.Unlock()
	opts := explain.Options{
		Source: "kernel", LocalAddrs: node.IPs, PodCIDRs: node.PodCIDRs,
		Cluster: &explain.Cluster{Snapshot: s.agent.prev, Node: node.Name},
	}
	var b strings.Builder
	if *service != "" {
		rep, err := explain.Service(s.kernel.Ruleset, *service, opts)
		if err != nil {
			return "", err
		}
		err = rep.Text(&b)
		return b.String(), err
	}
	r, err := explain.ParseRequest(*src, *dst, *proto, *from)
	if err != nil {
		return "", err
	}
	t := s.kernel.Ruleset[nft.FamilyOf(r.Dst.Addr())]
	if t == nil {
		return "no table for " + r.Dst.Addr().String(), nil
	}
	rep, err := explain.Trace(t, r, opts)
	if err != nil {
		return "", err
	}
	err = rep.Text(&b)
	return b.String(), err
}

// tamper is somebody else's transaction on the kernel, which nobody
// announces: the next sync finds the generation moved and reads back.
func (s *scenario) tamper(args []string) error {
	if len(args) == 1 && args[0] == "fail" {
		s.fail = true
		return nil
	}
	if len(args) < 2 {
		return errors.New("want kernel fail, or kernel CHANGE FAMILY [NAME]")
	}
	change, fam := args[0], nft.Family(args[1])
	t := s.kernel.Ruleset[fam]
	if t == nil {
		return fmt.Errorf("no table %s", fam)
	}
	var edit func(nft.Ruleset)
	switch {
	case change == "delete-table" && len(args) == 2:
		edit = func(rs nft.Ruleset) { delete(rs, fam) }
	case change == "flush-chain" && len(args) == 3 && t.Chain(args[2]) != nil:
		edit = func(nft.Ruleset) { t.Chain(args[2]).Rules = nil }
	case change == "flush-set" && len(args) == 3 && t.Set(args[2]) != nil:
		edit = func(nft.Ruleset) { t.Set(args[2]).Elements = nil }
	default:
		return fmt.Errorf("cannot %s", strings.Join(args, " "))
	}
	s.kernel.Unannounced(edit)
	return nil
}
