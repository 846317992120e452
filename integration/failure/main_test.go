//go:build integration

package failure

import (
	"os"
	"testing"
)

// TestMain removes the binary built for the tests, if any.
func TestMain(m *testing.M) {
	code := m.Run()
	if built.path != "" && os.Getenv("NFTPROXY") == "" {
		_ = os.Remove(built.path)
	}
	os.Exit(code)
}
