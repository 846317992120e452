package main

import (
	"fmt"
	"io"

	"github.com/nftproxy/nftproxy/config"
)

// loadConfig reads the --config file (ProxyConfiguration or
// KubeProxyConfiguration), or returns the defaults when there is none.
// Warnings about fields that do not apply are printed once.
func loadConfig(path string, stderr io.Writer) (*config.Configuration, error) {
	cfg := config.Default()
	if path != "" {
		var warnings []string
		var err error
		if cfg, warnings, err = config.Load(path); err != nil {
			return nil, err
		}
		for _, w := range warnings {
			fmt.Fprintf(stderr, "warning: %s: %s\n", path, w)
		}
	}
	if err := config.Validate(cfg); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return cfg, nil
}
