//go:build integration

package manifests

import (
	"context"
	"fmt"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"

	"github.com/nftproxy/nftproxy/deploy"
	"github.com/nftproxy/nftproxy/integration/apiserver"
	"github.com/nftproxy/nftproxy/integration/lab"
)

// TestManifestsPassServerSideDryRun creates every object of deploy/ with
// dryRun=All and strict field validation: the API server validates and
// admits each one as it would for kubectl apply, without storing it. It
// catches what decoding alone does not, such as a port name longer than 15
// characters. (The priority class is checked later, when the DaemonSet
// creates Pods, which this API server without controllers never does.)
func TestManifestsPassServerSideDryRun(t *testing.T) {
	ns := lab.NewNS(t, "api")
	api := apiserver.Start(t, ns)
	objs, err := deploy.Objects()
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for _, o := range objs {
		if err := create(ctx, api.Client, o, true); err != nil {
			t.Errorf("dry-run create %s: %v", describe(o), err)
		}
	}
	// Stored nothing: the ServiceAccount is not there.
	if _, err := api.Client.CoreV1().ServiceAccounts("kube-system").Get(ctx, "nftproxy", metav1.GetOptions{}); err == nil {
		t.Error("the dry run stored the ServiceAccount")
	}
}

// create creates o, only validated and admitted when dryRun is set.
func create(ctx context.Context, c kubernetes.Interface, o runtime.Object, dryRun bool) error {
	opts := metav1.CreateOptions{FieldValidation: metav1.FieldValidationStrict}
	if dryRun {
		opts.DryRun = []string{metav1.DryRunAll}
	}
	var err error
	switch o := o.(type) {
	case *corev1.ServiceAccount:
		_, err = c.CoreV1().ServiceAccounts(o.Namespace).Create(ctx, o, opts)
	case *corev1.ConfigMap:
		_, err = c.CoreV1().ConfigMaps(o.Namespace).Create(ctx, o, opts)
	case *rbacv1.ClusterRole:
		_, err = c.RbacV1().ClusterRoles().Create(ctx, o, opts)
	case *rbacv1.ClusterRoleBinding:
		_, err = c.RbacV1().ClusterRoleBindings().Create(ctx, o, opts)
	case *appsv1.DaemonSet:
		_, err = c.AppsV1().DaemonSets(o.Namespace).Create(ctx, o, opts)
	default:
		err = fmt.Errorf("no client for %T", o)
	}
	return err
}

func describe(o runtime.Object) string {
	m, err := metaOf(o)
	if err != nil {
		return fmt.Sprintf("%T", o)
	}
	return fmt.Sprintf("%T %s/%s", o, m.GetNamespace(), m.GetName())
}

func metaOf(o runtime.Object) (metav1.Object, error) {
	m, ok := o.(metav1.Object)
	if !ok {
		return nil, fmt.Errorf("%T has no metadata", o)
	}
	return m, nil
}
