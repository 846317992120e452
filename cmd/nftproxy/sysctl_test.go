package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2/ktesting"

	"github.com/nftproxy/nftproxy/config"
)

// TestSetConntrackTimeouts checks the mapping from the config (nil: leave
// the kernel's value) and that a failure is logged as a warning naming the
// sysctl and the value wanted, not returned.
func TestSetConntrackTimeouts(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "net", "netfilter")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	est := filepath.Join(dir, "nf_conntrack_tcp_timeout_established")
	if err := os.WriteFile(est, []byte("432000\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	// close_wait is missing, as when nf_conntrack is not loaded.
	logger := ktesting.NewLogger(t, ktesting.NewConfig(ktesting.BufferLogs(true)))
	c := config.Conntrack{
		TCPEstablishedTimeout: &metav1.Duration{Duration: 24 * time.Hour},
		TCPCloseWaitTimeout:   &metav1.Duration{Duration: time.Hour},
	}
	setConntrackTimeouts(root, c, logger)

	if b, _ := os.ReadFile(est); strings.TrimSpace(string(b)) != "86400" {
		t.Errorf("established = %q, want 86400", b)
	}
	logs := logger.GetSink().(ktesting.Underlier).GetBuffer().String()
	for _, want := range []string{"Warning: could not set conntrack sysctl", "net.netfilter.nf_conntrack_tcp_timeout_close_wait=3600"} {
		if !strings.Contains(logs, want) {
			t.Errorf("log lacks %q:\n%s", want, logs)
		}
	}

	// Unset timeouts touch nothing, not even a missing sysctl.
	if err := os.WriteFile(est, []byte("7\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	setConntrackTimeouts(root, config.Conntrack{}, logger)
	if b, _ := os.ReadFile(est); strings.TrimSpace(string(b)) != "7" {
		t.Errorf("established = %q after unset config, want 7", b)
	}
}
