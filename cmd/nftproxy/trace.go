package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/pflag"

	"github.com/nftproxy/nftproxy/nft"
	"github.com/nftproxy/nftproxy/proxy/explain"
)

// traceFlags are the flags of `nftproxy trace` (docs/trace.md).
type traceFlags struct {
	src, dst, proto, from string
	service, output       string
	manifests             manifestFlags
	kernel                bool
	kubeconfig            string
	inCluster             bool
	sport                 uint16
}

func (f *traceFlags) register(fs *pflag.FlagSet) {
	fs.StringVar(&f.src, "src", "", "source address of the packet, IP or IP:PORT (default: a typical one for --from)")
	fs.Uint16Var(&f.sport, "sport", 0, "source port of the packet (as --src IP:PORT): a Maglev Service's endpoint depends on it")
	fs.StringVar(&f.dst, "dst", "", "destination, IP:PORT ([IPv6]:PORT): a ClusterIP, NodePort, externalIP or load-balancer IP")
	fs.StringVar(&f.proto, "proto", "tcp", "protocol: tcp, udp or sctp")
	fs.StringVar(&f.from, "from", "", "where the packet comes from: external, pod or node (default: inferred from --src)")
	fs.StringVar(&f.service, "service", "", "trace every entry point of Service NAMESPACE/NAME instead of one packet")
	fs.StringVarP(&f.output, "output", "o", "text", "output format: text or json")
	f.manifests.register(fs)
	fs.BoolVar(&f.kernel, "kernel", false, "with -f: trace this network namespace's tables, and compare with what the manifests compile to")
	fs.StringVar(&f.kubeconfig, "kubeconfig", "", "ask the API server (this kubeconfig) for the Service, its endpoints' nodes, and what it should compile to")
	fs.BoolVar(&f.inCluster, "in-cluster", false, "ask the API server with the Pod's service account (inside the nftproxy Pod)")
}

func runTrace(args []string, stdout, stderr io.Writer) error {
	var f traceFlags
	fs := pflag.NewFlagSet("trace", pflag.ContinueOnError)
	fs.SetOutput(io.Discard) // errors are returned, in one line
	f.register(fs)
	fs.Usage = func() {}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			fmt.Fprint(stdout, traceUsage, fs.FlagUsages())
			return nil
		}
		return badInput(fmt.Errorf("trace: %w", err))
	}
	if fs.NArg() > 0 {
		return badInput(fmt.Errorf("trace: unexpected argument %q", fs.Arg(0)))
	}
	if err := f.check(fs.Changed("proto")); err != nil {
		return err
	}
	if f.service != "" {
		return f.traceService(stdout, stderr)
	}
	return f.tracePacket(stdout, stderr)
}

const traceUsage = `Usage:
  nftproxy trace --src IP[:PORT] --dst IP:PORT [--proto tcp|udp|sctp] [--from external|pod|node] [-o json]
  nftproxy trace --service NAMESPACE/NAME [-o json]

Explains where the first packet of a new connection goes, without sending
one: the path through the hooks, chains and rules, then every outcome with
its exact probability (DNAT to which endpoint, masquerading and why, or
drop or reject and why). By default it reads the tables of this network
namespace (needs CAP_NET_ADMIN: root, or the nftproxy Pod); -f traces what
manifests compile to instead, without root. Exit codes: 0 traced, 1 failed,
2 bad flag or argument, 3 (--service with -f --kernel, --kubeconfig or
--in-cluster) the tables do not do what the manifests or API server say.

Flags:
`

// check validates the flags that do not need the tables, each error
// naming its flag; proto tells whether --proto was given.
func (f *traceFlags) check(proto bool) error {
	if f.output != "text" && f.output != "json" {
		return badFlag("output", "want text or json, got %q", f.output)
	}
	if _, ok := explain.ProtoNumber(f.proto); !ok {
		return badFlag("proto", "want tcp, udp or sctp, got %q", f.proto)
	}
	if _, ok := explain.ParseOrigin(f.from); f.from != "" && !ok {
		return badFlag("from", "want external, pod or node, got %q", f.from)
	}
	api := f.kubeconfig != "" || f.inCluster
	switch {
	case f.service != "" && (f.dst != "" || f.src != "" || f.from != "" || proto):
		return badFlag("service", "traces every entry point, each port with its protocol, from typical clients: "+
			"leave out --dst, --src, --from and --proto")
	case f.service == "" && f.dst == "":
		return badFlag("dst", "missing: give IP:PORT (or --service NAMESPACE/NAME)")
	case len(f.manifests.files) > 0 && api:
		return badFlag("filename", "-f and --kubeconfig/--in-cluster are two sources of the cluster's objects: give one")
	case f.kernel && len(f.manifests.files) == 0:
		return badFlag("kernel", "only with -f: without -f the kernel's tables are traced anyway")
	case f.kubeconfig != "" && f.inCluster:
		return badFlag("in-cluster", "give --kubeconfig or --in-cluster, not both")
	}
	return nil
}

// request parses the packet's flags.
func (f *traceFlags) request() (explain.Request, error) {
	r, err := explain.ParseRequest(f.src, f.dst, f.proto, f.from)
	if err != nil {
		return r, requestError(err)
	}
	if f.sport != 0 {
		if r.SrcPort != 0 && r.SrcPort != f.sport {
			return r, badFlag("sport", "%d: --src already gives port %d", f.sport, r.SrcPort)
		}
		r.SrcPort = f.sport
	}
	return r, nil
}

// tracePacket explains one packet.
func (f *traceFlags) tracePacket(stdout, stderr io.Writer) error {
	r, err := f.request()
	if err != nil {
		return err
	}
	src, err := f.tables(stderr)
	if err != nil {
		return err
	}
	fam := nft.FamilyOf(r.Dst.Addr())
	t := src.rs[fam]
	if t == nil {
		return badFlag("dst", "%s: %s", r.Dst.Addr(), src.noTable(fam))
	}
	rep, err := explain.Trace(t, r, src.opts)
	if err != nil {
		return requestError(err)
	}
	if rep.Service != nil && src.lookup != nil {
		// Again, with the endpoints' nodes; without them if the API server
		// cannot tell.
		if err := src.lookup(rep.Service.Namespace, rep.Service.Name, stderr); err != nil {
			fmt.Fprintf(stderr, "warning: %v: the endpoints' nodes stay unknown\n", err)
		} else if rep, err = explain.Trace(t, r, src.opts); err != nil {
			return requestError(err)
		}
	}
	return f.write(stdout, rep)
}

// traceService explains every entry of one Service, compared with what
// the manifests or the API server compile to when they are at hand.
func (f *traceFlags) traceService(stdout, stderr io.Writer) error {
	src, err := f.tables(stderr)
	if err != nil {
		return err
	}
	ns, name, _ := strings.Cut(f.service, "/")
	if src.lookup != nil {
		if err := src.lookup(ns, name, stderr); err != nil {
			return err
		}
	}
	rep, err := explain.Service(src.rs, f.service, src.opts)
	if err != nil {
		return requestError(err)
	}
	if src.desired != nil {
		if err := explain.Compare(rep, src.rs, src.desired, src.against, src.opts); err != nil {
			return err
		}
	}
	if err := f.write(stdout, rep); err != nil {
		return err
	}
	if rep.Comparison != nil && !rep.Comparison.Matches {
		return &exitError{exitMismatch, fmt.Errorf("trace: %s: the tables do not do what the %s say (%d differences)",
			f.service, strings.ReplaceAll(src.against, "api-server", "API server's objects"), len(rep.Comparison.Differences))}
	}
	return nil
}

// requestError marks what the explainer found wrong with the request as
// bad input (it names the flag).
func requestError(err error) error {
	var re *explain.RequestError
	if errors.As(err, &re) {
		return badInput(err)
	}
	return err
}

// report is what trace writes: explain.Report or explain.ServiceReport.
type report interface{ Text(io.Writer) error }

func (f *traceFlags) write(w io.Writer, r report) error {
	if f.output == "text" {
		return r.Text(w)
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}
