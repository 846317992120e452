//go:build integration

package integration

import (
	"os"
	"testing"

	"github.com/nftproxy/nftproxy/integration/lab"
)

// TestMain removes the nftproxy binary built for the tests, if any.
func TestMain(m *testing.M) {
	code := m.Run()
	lab.RemoveNftproxy()
	os.Exit(code)
}
