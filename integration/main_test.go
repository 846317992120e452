//go:build integration

package integration

import (
	"testing"

	"github.com/nftproxy/nftproxy/integration/lab"
)

// TestMain removes the nftproxy binary built for the tests, if any.
func TestMain(m *testing.M) { lab.Main(m) }
