// Command nftproxy is a Kubernetes service proxy that programs nftables
// directly over netlink: a drop-in replacement for kube-proxy.
//
//	nftproxy [run] [--config FILE] [FLAGS]   the node agent (kube-proxy's flags)
//	nftproxy compile -f PATH...   print the ruleset manifests compile to
//	nftproxy apply -f PATH...     program the current network namespace once
//	nftproxy trace --dst IP:PORT  explain where a packet goes, and why
//	nftproxy cleanup              remove nftproxy's tables
//	nftproxy version              print the version
package main

import (
	"fmt"
	"io"
	"os"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "dev"

// commands maps a subcommand to its function; each parses its own flags.
var commands = map[string]func(args []string, stdout, stderr io.Writer) error{
	"run":     runAgent,
	"compile": runCompile,
	"apply":   runApply,
	"trace":   runTrace,
	"cleanup": runCleanup,
	"version": func([]string, io.Writer, io.Writer) error { fmt.Println("nftproxy", version); return nil },
}

func main() {
	if err := dispatch(os.Args[1:], os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "nftproxy:", err)
		os.Exit(exitCode(err))
	}
}

func dispatch(args []string, stdout, stderr io.Writer) error {
	if isRunArgs(args) {
		return runAgent(args, stdout, stderr)
	}
	if args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		fmt.Fprint(stdout, usage)
		return nil
	}
	cmd, ok := commands[args[0]]
	if !ok {
		return fmt.Errorf("unknown command %q (run 'nftproxy help')", args[0])
	}
	return cmd(args[1:], stdout, stderr)
}

const usage = `nftproxy: a Kubernetes service proxy on nftables, a drop-in replacement for kube-proxy.

Usage:
  nftproxy [run] [--config FILE] [--kubeconfig FILE] [--master URL] [flags]
      The node agent: watch the API server and keep this network namespace's
      nftables rules in step. Run 'nftproxy run --help' for the flags.
  nftproxy compile -f PATH [-f PATH...] [--node-name N] [--config FILE]
      Print the nftables ruleset the manifests (Services, EndpointSlices, Nodes,
      ServiceCIDRs; YAML or JSON files or directories) compile to; objects of
      other kinds are named on stderr and ignored. Needs no root and no cluster.
  nftproxy apply -f PATH [-f PATH...] [--node-name N] [--config FILE]
      Program the current network namespace once, in one transaction; run again
      with changed manifests to apply only the difference.
  nftproxy trace --src IP[:PORT] --dst IP:PORT [--proto tcp|udp|sctp] [--from external|pod|node] [-o json]
  nftproxy trace --service NS/NAME [-o json]
      Explain where a new connection goes through the tables of this network
      namespace (root), or through what manifests compile to (-f, no root):
      every outcome with its exact probability, and why. 'nftproxy trace --help'.
  nftproxy cleanup
      Remove nftproxy's tables (table ip kube-proxy, table ip6 kube-proxy).
  nftproxy version
`
