//go:build integration

package failure

import (
	"os"
	"testing"

	"github.com/nftproxy/nftproxy/integration/lab"
)

// TestMain removes the binary built for the tests, if any.
func TestMain(m *testing.M) {
	code := m.Run()
	lab.RemoveNftproxy()
	os.Exit(code)
}
