package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCompileSaysWhatItIgnores: compile programs ServiceCIDRs and names
// every object it reads but does not program.
func TestCompileSaysWhatItIgnores(t *testing.T) {
	dir := t.TempDir()
	input := `apiVersion: v1
kind: Node
metadata: {name: node-a}
status: {addresses: [{type: InternalIP, address: 10.0.0.1}]}
---
apiVersion: networking.k8s.io/v1
kind: ServiceCIDR
metadata: {name: kubernetes}
spec: {cidrs: [10.96.0.0/16]}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: cfg}
`
	path := filepath.Join(dir, "in.yaml")
	if err := os.WriteFile(path, []byte(input), 0o644); err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	if err := runCompile([]string{"-f", path}, &stdout, &stderr); err != nil {
		t.Fatal(err)
	}
	if want := "ignored: " + path + " (document 3): v1 ConfigMap cfg\n"; stderr.String() != want {
		t.Errorf("stderr %q, want %q", stderr.String(), want)
	}
	if !strings.Contains(stdout.String(), "elements = { 10.96.0.0/16 }") {
		t.Errorf("the ServiceCIDR is not in the service-cidrs set:\n%s", stdout.String())
	}
}
