package apiserver

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nftproxy/nftproxy/integration/lab"
)

// buildTimeout bounds a cold build of kube-apiserver on a slow machine.
const buildTimeout = 60 * time.Minute

// module is the main module's path, to find the repository root.
const module = "github.com/nftproxy/nftproxy"

// etcdBinary returns etcd's path, skipping the test when it is missing.
func etcdBinary(t testing.TB) string {
	t.Helper()
	path, err := exec.LookPath("etcd")
	if err != nil {
		t.Skip("apiserver: etcd not found in PATH; install Debian's etcd-server package")
	}
	return path
}

// kubeAPIServerBinary returns $KUBE_APISERVER or the path
// hack/kube-apiserver.sh prints, building it the first time. It is computed
// once per process.
var kubeAPIServerBinary = lab.Binary("kube-apiserver", findKubeAPIServer)

func findKubeAPIServer() (string, error) {
	if path := os.Getenv("KUBE_APISERVER"); path != "" {
		return path, nil
	}
	root, err := repoRoot()
	if err != nil {
		return "", err
	}
	ctx, cancel := context.WithTimeout(context.Background(), buildTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, filepath.Join(root, "hack", "kube-apiserver.sh"))
	cmd.Stderr = os.Stderr // build progress
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("hack/kube-apiserver.sh: %w", err)
	}
	return strings.TrimSpace(string(out)), nil
}

// repoRoot walks up from the working directory (a test's package directory)
// to the main module's go.mod.
func repoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		b, err := os.ReadFile(filepath.Join(dir, "go.mod"))
		if err == nil && bytes.HasPrefix(b, []byte("module "+module+"\n")) {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("not inside the nftproxy repository: set KUBE_APISERVER")
		}
		dir = parent
	}
}
