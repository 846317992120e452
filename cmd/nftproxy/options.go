package main

import (
	"fmt"
	"io"

	"github.com/nftproxy/nftproxy/nft"
	"github.com/nftproxy/nftproxy/proxy/model"
)

// TEMPORARY until config lands.
func loadOptions(path string, stderr io.Writer) (nft.Options, error) {
	if path != "" {
		return nft.Options{}, fmt.Errorf("config not yet supported")
	}
	return nft.DefaultOptions(), nil
}

func nodeOptions(o nft.Options, node model.Node) nft.Options { return o }
