package main

import (
	"bytes"
	"cmp"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"testing"

	"github.com/nftproxy/nftproxy/proxy/manifest"
	"github.com/nftproxy/nftproxy/proxy/model"
	"github.com/nftproxy/nftproxy/proxy/model/synth"
)

// The manifests read back as exactly the cluster they were written from.
func TestManifestsReadBack(t *testing.T) {
	for _, spec := range []synth.Spec{
		{Services: 120, Endpoints: 3, Mixed: true},
		{Services: 50, Endpoints: 150, Mixed: true, AffinityEvery: 2, LocalEvery: 4},
		{Services: 10, Endpoints: 2},
	} {
		var b bytes.Buffer
		writeCluster(&b, spec, false)
		path := filepath.Join(t.TempDir(), "cluster.yaml")
		if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		res, err := manifest.Load([]string{path})
		if err != nil {
			t.Fatalf("%+v: %v", spec, err)
		}
		want := synth.Cluster(spec)
		manifestOrder(want)
		if !reflect.DeepEqual(*want, res.Snapshot) {
			t.Errorf("%+v: the manifests read back differ from the cluster", spec)
		}
		if len(res.Nodes) != 1 || res.Nodes[0].Name != synth.NodeName || len(res.Skipped) != 0 {
			t.Errorf("%+v: nodes %v, skipped %v", spec, res.Nodes, res.Skipped)
		}
	}
}

// manifestOrder sorts snap as manifest.Load returns objects: by namespace,
// then name.
func manifestOrder(snap *model.Snapshot) {
	slices.SortFunc(snap.Services, func(a, b model.Service) int {
		return cmp.Or(cmp.Compare(a.Namespace, b.Namespace), cmp.Compare(a.Name, b.Name))
	})
	slices.SortFunc(snap.Slices, func(a, b model.EndpointSlice) int {
		return cmp.Or(cmp.Compare(a.Namespace, b.Namespace), cmp.Compare(a.Name, b.Name))
	})
}
