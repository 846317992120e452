package main

import (
	"fmt"
	"io"

	"github.com/spf13/pflag"

	"github.com/nftproxy/nftproxy/config"
	"github.com/nftproxy/nftproxy/nft"
	"github.com/nftproxy/nftproxy/proxy/agent"
	"github.com/nftproxy/nftproxy/proxy/compile"
	"github.com/nftproxy/nftproxy/proxy/manifest"
	"github.com/nftproxy/nftproxy/proxy/model"
)

// manifestFlags are the flags compile and apply share.
type manifestFlags struct {
	files    []string
	nodeName string
	config   string
}

func (m *manifestFlags) register(fs *pflag.FlagSet) {
	fs.StringArrayVarP(&m.files, "filename", "f", nil, "manifest file or directory (repeatable)")
	fs.StringVar(&m.nodeName, "node-name", "", "the Node to compile for (default: the only Node in the input)")
	fs.StringVar(&m.config, "config", "", "ProxyConfiguration or KubeProxyConfiguration file")
}

func parseFlags(name string, args []string, stderr io.Writer, register func(*pflag.FlagSet)) error {
	fs := pflag.NewFlagSet(name, pflag.ContinueOnError)
	fs.SetOutput(stderr)
	register(fs)
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("%s: unexpected argument %q", name, fs.Arg(0))
	}
	return nil
}

// compileManifests loads the manifests and compiles them. Every object
// read but not programmed (other kinds, headless Services, ...) is named
// on stderr; problems with single objects are printed as warnings and the
// objects left out.
func (m *manifestFlags) compileManifests(stderr io.Writer) (nft.Ruleset, error) {
	l, err := m.load(stderr)
	if err != nil {
		return nil, err
	}
	return l.compile(stderr), nil
}

// loaded is what the manifests and --config say.
type loaded struct {
	snapshot *model.Snapshot
	node     model.Node
	cfg      *config.Configuration
}

// load reads --config and the manifests, and picks the Node.
func (m *manifestFlags) load(stderr io.Writer) (*loaded, error) {
	if len(m.files) == 0 {
		return nil, fmt.Errorf("no manifests: pass -f PATH")
	}
	cfg, err := loadConfig(m.config, stderr)
	if err != nil {
		return nil, err
	}
	res, err := manifest.Load(m.files)
	if err != nil {
		return nil, err
	}
	for _, s := range res.Skipped {
		fmt.Fprintf(stderr, "ignored: %s\n", s)
	}
	node, err := pickNode(res.Nodes, m.nodeName, stderr)
	if err != nil {
		return nil, err
	}
	return &loaded{snapshot: &res.Snapshot, node: node, cfg: cfg}, nil
}

// compile compiles what was loaded, printing each problem as a warning.
func (l *loaded) compile(stderr io.Writer) nft.Ruleset {
	rs, problems := compile.Ruleset(l.snapshot, l.node, agent.CompilerOptions(l.cfg, l.node))
	for _, p := range problems {
		fmt.Fprintf(stderr, "warning: %v\n", p)
	}
	return rs
}

// pickNode returns the Node called name, or the only Node when name is
// empty. With no Node at all, NodePorts have no addresses to listen on.
func pickNode(nodes []model.Node, name string, stderr io.Writer) (model.Node, error) {
	if name != "" {
		for _, n := range nodes {
			if n.Name == name {
				return n, nil
			}
		}
		return model.Node{}, fmt.Errorf("--node-name %q: no such Node in the input", name)
	}
	switch len(nodes) {
	case 0:
		fmt.Fprintln(stderr, "warning: no Node in the input: NodePorts get no addresses")
		return model.Node{}, nil
	case 1:
		return nodes[0], nil
	}
	return model.Node{}, fmt.Errorf("%d Nodes in the input: pass --node-name", len(nodes))
}

func runCompile(args []string, stdout, stderr io.Writer) error {
	var m manifestFlags
	if err := parseFlags("compile", args, stderr, m.register); err != nil {
		return err
	}
	rs, err := m.compileManifests(stderr)
	if err != nil {
		return err
	}
	_, err = io.WriteString(stdout, rs.Text())
	return err
}
