//go:build integration

package failure

import (
	"testing"

	"github.com/nftproxy/nftproxy/integration/lab"
)

// TestMain removes the binary built for the tests, if any.
func TestMain(m *testing.M) { lab.Main(m) }
