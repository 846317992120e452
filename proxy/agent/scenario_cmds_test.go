package agent

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/tools/txtar"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/tools/record"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/nftproxy/nftproxy/config"
	"github.com/nftproxy/nftproxy/nft"
	"github.com/nftproxy/nftproxy/proxy/dataplane"
	"github.com/nftproxy/nftproxy/proxy/metrics"
)

// A scenario's commands, one a line; "> NAME" after a command that prints
// sends its output to section NAME, which it must equal.
//
//	apply FILE...           create or update the objects of these sections
//	delete KIND NS/NAME     delete an object (KIND: service, endpointslice,
//	                        node, servicecidr; a node or ServiceCIDR is NAME)
//	start [CONFIG]          start the agent (config.Parse of section CONFIG,
//	                        or the defaults); what was applied before is the
//	                        informers' initial list
//	sync                    one sync; prints what the data plane did
//	table [FAMILY]          prints the kernel's tables (or one of them)
//	changes                 prints what the last sync changed in the kernel,
//	                        one operation a line
//	trace ARGS...           prints `nftproxy trace ARGS` over the kernel's
//	                        tables (--src, --dst, --proto, --from, --service)
//	events                  prints the Warning events since the last events
//	advance DURATION        moves the agent's clock on
//	kernel fail             the next transaction fails
//	kernel CHANGE FAMILY [NAME]
//	                        somebody else changes the kernel, unannounced:
//	                        delete-table, flush-chain NAME, flush-set NAME
type scenario struct {
	t        *testing.T
	ar       *txtar.Archive
	client   *fake.Clientset
	clock    *clocktesting.FakeClock
	kernel   *nft.Fake
	rec      *record.FakeRecorder
	agent    *Agent
	dp       *recordingDataplane
	recorded *atomic.Int64
	// writes counts the object writes the handlers must have recorded
	// before a sync; mark is the kernel's ruleset before the last sync.
	writes int64
	mark   nft.Ruleset
	fail   bool
}

func newScenario(t *testing.T, ar *txtar.Archive, recorded *atomic.Int64) *scenario {
	return &scenario{
		t: t, ar: ar, recorded: recorded,
		client: fake.NewClientset(),
		clock:  clocktesting.NewFakeClock(t0),
		kernel: nft.NewFake(),
		rec:    record.NewFakeRecorder(100),
		mark:   nft.Ruleset{},
	}
}

// run runs one command and returns what it prints.
func (s *scenario) run(args []string) (string, error) {
	if len(args) == 0 {
		return "", errors.New("empty command")
	}
	cmd, args := args[0], args[1:]
	if s.agent == nil && cmd != "apply" && cmd != "delete" && cmd != "start" {
		return "", fmt.Errorf("%s before start", cmd)
	}
	out, err := s.dispatch(cmd, args)
	if out != "" && !strings.HasSuffix(out, "\n") {
		out += "\n"
	}
	return out, err
}

func (s *scenario) dispatch(cmd string, args []string) (string, error) {
	switch cmd {
	case "apply":
		return "", s.apply(args)
	case "delete":
		return "", s.delete(args)
	case "start":
		return "", s.start(args)
	case "sync":
		return s.sync()
	case "table":
		return s.table(args)
	case "changes":
		return s.changes(), nil
	case "trace":
		return s.trace(args)
	case "events":
		return strings.Join(drainEvents(s.rec), "\n"), nil
	case "advance":
		return "", s.advance(args)
	case "kernel":
		return "", s.tamper(args)
	}
	return "", fmt.Errorf("unknown command %q", cmd)
}

func (s *scenario) file(name string) ([]byte, error) {
	for _, f := range s.ar.Files {
		if f.Name == name {
			return f.Data, nil
		}
	}
	return nil, fmt.Errorf("no section %q", name)
}

// start makes the agent and waits until its informers listed what was
// applied so far and watch.
func (s *scenario) start(args []string) error {
	if s.agent != nil {
		return errors.New("started already")
	}
	cfg := config.Default()
	if len(args) == 1 {
		data, err := s.file(args[0])
		if err != nil {
			return err
		}
		var warnings []string
		if cfg, warnings, err = config.Parse(data); err != nil {
			return err
		}
		if len(warnings) > 0 {
			return fmt.Errorf("config warnings: %v", warnings)
		}
	}
	s.dp = &recordingDataplane{Dataplane: dataplane.New(s.kernel)}
	s.agent = New(Config{
		Client: s.client, NodeName: "node-1", Proxy: cfg, Dataplane: s.dp,
		Recorder: s.rec, Metrics: metrics.New(), Clock: s.clock,
	})
	// The initial lists reach the handlers as one add an object.
	s.writes = s.recorded.Load() + int64(s.objects())
	watching := watchesStarted(s)
	ctx, cancel := context.WithCancel(context.Background())
	s.t.Cleanup(cancel)
	if err := s.agent.start(ctx); err != nil {
		return err
	}
	for range 4 { // Services, EndpointSlices, the Node, ServiceCIDRs
		<-watching
	}
	return nil
}

// objects counts the objects the agent's informers list from the fake
// clientset, which filters lists (not watches) by label.
func (s *scenario) objects() int {
	ctx, c := context.Background(), s.client
	proxied := metav1.ListOptions{LabelSelector: proxySelector()}
	svcs, err1 := c.CoreV1().Services("").List(ctx, proxied)
	eps, err2 := c.DiscoveryV1().EndpointSlices("").List(ctx, proxied)
	nodes, err3 := c.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	cidrs, err4 := c.NetworkingV1().ServiceCIDRs().List(ctx, metav1.ListOptions{})
	if err := errors.Join(err1, err2, err3, err4); err != nil {
		s.t.Fatal(err)
	}
	return len(svcs.Items) + len(eps.Items) + len(nodes.Items) + len(cidrs.Items)
}

// settle waits until the handlers recorded every write since start: the
// fake clientset sends one watch event a write, and the handlers take each
// once. The limit only stops a hung test.
func (s *scenario) settle() error {
	for deadline := time.Now().Add(time.Minute); s.recorded.Load() < s.writes; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			return fmt.Errorf("the handlers recorded %d of %d writes", s.recorded.Load(), s.writes)
		}
	}
	return nil
}

// sync runs one sync of the agent, as its runner would, and prints what
// the data plane did; a failed sync prints its error.
func (s *scenario) sync() (string, error) {
	if err := s.settle(); err != nil {
		return "", err
	}
	if s.fail {
		s.kernel.FailAt, s.kernel.FailErr = 0, errors.New("injected failure")
	}
	before := s.kernel.Transactions
	s.mark = s.kernel.Ruleset.Clone()
	err := s.agent.sync()
	s.kernel.FailAt, s.kernel.FailErr, s.fail = -1, nil, false
	var b strings.Builder
	if err != nil {
		fmt.Fprintf(&b, "failed: %v\n", err)
	}
	res, kind := s.dp.last, "partial"
	switch {
	case res.Full:
		kind = "tables replaced"
	case s.dp.in.Full:
		kind = "reconciled"
	}
	fmt.Fprintf(&b, "%s: %s in %s", kind, plural(res.Ops, "operation"), plural(s.kernel.Transactions-before, "transaction"))
	if res.Repaired {
		b.WriteString(", repaired")
	}
	if res.ReadBack {
		b.WriteString(", read back")
	}
	b.WriteString("\n")
	for _, p := range res.Problems {
		fmt.Fprintf(&b, "left out: %v\n", p.Error())
	}
	return b.String(), nil
}

func (s *scenario) table(args []string) (string, error) {
	if len(args) == 0 {
		return s.kernel.Ruleset.Text(), nil
	}
	t := s.kernel.Ruleset[nft.Family(args[0])]
	if t == nil {
		return fmt.Sprintf("no table %s %s\n", args[0], nft.TableName), nil
	}
	return t.Text(), nil
}

// changes prints what the last sync changed in the kernel, as the
// operations from the ruleset before it to the one after, elements one a
// line: the net change, which the sync may have sent in other operations.
func (s *scenario) changes() string {
	plan := nft.Diff(s.mark, s.kernel.Ruleset)
	var lines []string
	for _, op := range plan.Ops {
		if op.Kind != nft.AddElements && op.Kind != nft.DeleteElements {
			lines = append(lines, op.String())
			continue
		}
		for _, e := range op.Elements {
			lines = append(lines, fmt.Sprintf("%s %s %s %s { %s }", op.Kind, op.Family, nft.TableName, op.Name, op.Set.ElementText(e)))
		}
	}
	if len(lines) == 0 {
		return "no changes"
	}
	return strings.Join(lines, "\n")
}

func (s *scenario) advance(args []string) error {
	if len(args) != 1 {
		return errors.New("want advance DURATION")
	}
	d, err := time.ParseDuration(args[0])
	if err != nil {
		return err
	}
	s.clock.Step(d)
	return nil
}

// recordingDataplane is the real Dataplane, keeping the Result of its last
// Sync for the script.
type recordingDataplane struct {
	*dataplane.Dataplane
	in   dataplane.Input
	last dataplane.Result
}

func (r *recordingDataplane) Sync(in dataplane.Input) (dataplane.Result, error) {
	res, err := r.Dataplane.Sync(in)
	r.in, r.last = in, res
	return res, err
}

func drainEvents(rec *record.FakeRecorder) []string {
	var out []string
	for {
		select {
		case e := <-rec.Events:
			out = append(out, e)
		default:
			return out
		}
	}
}

func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
