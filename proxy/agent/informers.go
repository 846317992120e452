package agent

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"
	coreinformers "k8s.io/client-go/informers/core/v1"
	discoveryinformers "k8s.io/client-go/informers/discovery/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"

	"github.com/nftproxy/nftproxy/proxy/kube"
)

// watches are the informers the agent keeps.
type watches struct {
	node, cidrs  informers.SharedInformerFactory
	services     cache.SharedIndexInformer
	slices       cache.SharedIndexInformer
	nodes        cache.SharedIndexInformer
	serviceCIDRs cache.SharedIndexInformer
	// hasSynced gates the first sync: Services, EndpointSlices and the
	// Node. ServiceCIDRs do not gate it (see addHandlers).
	hasSynced []cache.InformerSynced
}

// proxySelector leaves out, at the API server, what kube-proxy leaves out:
// objects for another proxy and the EndpointSlices of headless Services.
// proxy/kube skips them again, in case the selector is ever widened.
func proxySelector() string {
	noProxyName, _ := labels.NewRequirement(kube.LabelServiceProxyName, selection.DoesNotExist, nil)
	noHeadless, _ := labels.NewRequirement(corev1.IsHeadlessService, selection.DoesNotExist, nil)
	return labels.NewSelector().Add(*noProxyName, *noHeadless).String()
}

func newWatches(client kubernetes.Interface, nodeName string) watches {
	var inf watches
	// Resync 0: the periodic reconcile is the sync loop's, against the
	// kernel; replaying the cache to the handlers would add nothing.
	tweak := func(o *metav1.ListOptions) { o.LabelSelector = proxySelector() }
	inf.node = informers.NewSharedInformerFactoryWithOptions(client, 0,
		informers.WithTweakListOptions(func(o *metav1.ListOptions) {
			o.FieldSelector = fields.OneTermEqualSelector("metadata.name", nodeName).String()
		}))
	inf.cidrs = informers.NewSharedInformerFactory(client, 0)
	// No indexer: a factory's default namespace index holds a set of
	// every object's key by namespace, and nothing asks it. These two are run by start, not by a factory.
	inf.services = coreinformers.NewFilteredServiceInformer(client, metav1.NamespaceAll, 0, cache.Indexers{}, tweak)
	inf.slices = discoveryinformers.NewFilteredEndpointSliceInformer(client, metav1.NamespaceAll, 0, cache.Indexers{}, tweak)
	inf.nodes = inf.node.Core().V1().Nodes().Informer()
	inf.serviceCIDRs = inf.cidrs.Networking().V1().ServiceCIDRs().Informer()
	for _, i := range []cache.SharedIndexInformer{inf.services, inf.slices, inf.nodes, inf.serviceCIDRs} {
		_ = i.SetTransform(transform) // fails only once started
	}
	return inf
}

// start runs the informers. The EndpointSlices are listed once the
// Services are in the cache: an initial list holds the whole response and
// every decoded API object until the list is converted, and the two lists
// at once were the agent's peak memory from an API server without watch
// lists (docs/benchmarks.md, Profiling).
func (inf *watches) start(ctx context.Context) {
	inf.node.Start(ctx.Done())
	inf.cidrs.Start(ctx.Done())
	go inf.services.RunWithContext(ctx)
	go func() {
		if cache.WaitForCacheSync(ctx.Done(), inf.services.HasSynced) {
			inf.slices.RunWithContext(ctx)
		}
	}()
}

// addHandlers connects the informers to the agent's record functions.
//
// Synced means the handlers have processed the initial list, not only that
// the informer's store holds it: the tracker is fed by the handlers, which
// lag behind the store, and a sync in between would program Services
// without their endpoints (kube-proxy waits on the registrations too).
func (inf *watches) addHandlers(a *Agent) error {
	regs := []func() (cache.ResourceEventHandlerRegistration, error){
		func() (cache.ResourceEventHandlerRegistration, error) {
			return inf.services.AddEventHandler(handler(a.setService))
		},
		func() (cache.ResourceEventHandlerRegistration, error) {
			return inf.slices.AddEventHandler(handler(a.setSlice))
		},
		func() (cache.ResourceEventHandlerRegistration, error) {
			return inf.nodes.AddEventHandler(handler(a.setNode))
		},
	}
	for _, add := range regs {
		reg, err := add()
		if err != nil {
			return fmt.Errorf("add informer handler: %w", err)
		}
		inf.hasSynced = append(inf.hasSynced, reg.HasSynced)
	}
	// ServiceCIDRs only add drops for addresses no Service holds, and are
	// programmed whenever they arrive, as kube-proxy does: a cluster
	// without the API (before 1.33) or a ClusterRole from before it must
	// not keep the agent from programming Services.
	if _, err := inf.serviceCIDRs.AddEventHandler(handler(a.setServiceCIDR)); err != nil {
		return fmt.Errorf("add informer handler: %w", err)
	}
	return nil
}

// handler turns add, update and delete into one call: set(key, obj) with
// obj nil on delete.
func handler[T any](set func(key string, obj *T)) cache.ResourceEventHandlerFuncs {
	return cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { call(set, obj, false) },
		UpdateFunc: func(_, obj any) { call(set, obj, false) },
		DeleteFunc: func(obj any) { call(set, obj, true) },
	}
}

// beforeRecord runs before each handler call; tests slow the handlers
// down with it to check that syncs wait for them. afterRecord runs after
// each one: tests that change objects wait with it until the handlers
// have recorded every change.
var (
	beforeRecord = func() {}
	afterRecord  = func() {}
)

func call[T any](set func(key string, obj *T), obj any, deleted bool) {
	beforeRecord()
	defer afterRecord()
	if tomb, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		set(tomb.Key, nil)
		return
	}
	typed, ok := obj.(*T)
	if !ok {
		return
	}
	key, err := cache.MetaNamespaceKeyFunc(obj)
	if err != nil {
		return
	}
	if deleted {
		typed = nil
	}
	set(key, typed)
}

// uid returns the UID of a Service or EndpointSlice in the cache, for events.
func (inf *watches) uid(kind, namespace, name string) types.UID {
	var store cache.Store
	switch kind {
	case "Service":
		store = inf.services.GetStore()
	case "EndpointSlice":
		store = inf.slices.GetStore()
	default:
		return ""
	}
	obj, ok, _ := store.GetByKey(namespace + "/" + name)
	if !ok {
		return ""
	}
	if m, ok := obj.(metav1.ObjectMetaAccessor); ok {
		return m.GetObjectMeta().GetUID()
	}
	return ""
}
