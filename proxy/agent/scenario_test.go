package agent

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/tools/txtar"
)

var update = flag.Bool("update", false, "rewrite the output sections of testdata/scenarios/*.txtar")

// TestScenarios runs the whole agent without root: informers on a fake
// clientset, the real tracker, compiler, differ and Dataplane over an
// nft.Fake. Each testdata/scenarios/*.txtar file is one scenario, in the
// manner of Cilium's load-balancer script tests: its comment is a script of
// commands (scenario_cmds_test.go), its files the objects the commands
// apply and the output they must print. `go test ./proxy/agent -run
// Scenarios -update` rewrites the output sections; review the diff.
func TestScenarios(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "scenarios", "*.txtar"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatal("no scenarios in testdata/scenarios")
	}
	// The handlers are counted across scenarios, which run one at a time.
	var recorded atomic.Int64
	afterRecord = func() { recorded.Add(1) }
	t.Cleanup(func() { afterRecord = func() {} })
	for _, path := range files {
		t.Run(strings.TrimSuffix(filepath.Base(path), ".txtar"), func(t *testing.T) {
			runScenario(t, path, &recorded)
		})
	}
}

// runScenario runs the script of one file and compares, or with -update
// rewrites, every output it names.
func runScenario(t *testing.T, path string, recorded *atomic.Int64) {
	ar, err := txtar.ParseFile(path)
	if err != nil {
		t.Fatal(err)
	}
	s := newScenario(t, ar, recorded)
	outputs := map[string]string{}
	var order []string // of the outputs, for -update
	for i, line := range strings.Split(string(ar.Comment), "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		args, out := parseLine(line)
		got, err := s.run(args)
		if err != nil {
			t.Fatalf("%s:%d: %s: %v", path, i+1, line, err)
		}
		if out == "" {
			if got != "" {
				t.Fatalf("%s:%d: %s: prints output; name a section for it with > NAME:\n%s", path, i+1, line, got)
			}
			continue
		}
		if earlier, ok := outputs[out]; ok {
			// A section named again says the output is what it was.
			if diff := cmp.Diff(earlier, got); diff != "" {
				t.Errorf("%s:%d: %s: not what it printed before (-before +now):\n%s", path, i+1, line, diff)
			}
			continue
		}
		outputs[out] = got
		order = append(order, out)
		if !*update {
			want, ok := section(ar, out)
			if !ok {
				t.Fatalf("%s:%d: no section %q: run with -update", path, i+1, out)
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("%s:%d: %s (-want +got):\n%s", path, i+1, line, diff)
			}
		}
	}
	if *update {
		rewrite(t, path, ar, outputs, order)
	}
}

// parseLine splits a script line into its words and the section its
// output goes to ("> NAME" at the end), if any.
func parseLine(line string) (args []string, out string) {
	args = strings.Fields(line)
	if n := len(args); n >= 2 && args[n-2] == ">" {
		return args[:n-2], args[n-1]
	}
	return args, ""
}

func section(ar *txtar.Archive, name string) (string, bool) {
	for _, f := range ar.Files {
		if f.Name == name {
			return string(f.Data), true
		}
	}
	return "", false
}

// rewrite replaces the output sections of the file at path with outputs,
// adding those it lacks, and drops output sections no command names.
func rewrite(t *testing.T, path string, ar *txtar.Archive, outputs map[string]string, order []string) {
	inputs := inputNames(ar)
	var files []txtar.File
	for _, f := range ar.Files {
		if got, ok := outputs[f.Name]; ok {
			f.Data = []byte(got)
			delete(outputs, f.Name)
		} else if !inputs[f.Name] {
			continue
		}
		files = append(files, f)
	}
	for _, name := range order {
		if got, ok := outputs[name]; ok {
			files = append(files, txtar.File{Name: name, Data: []byte(got)})
		}
	}
	ar.Files = files
	if err := os.WriteFile(path, txtar.Format(ar), 0o644); err != nil {
		t.Fatal(err)
	}
}

// inputNames are the sections the script reads: the words of its lines
// that name a section.
func inputNames(ar *txtar.Archive) map[string]bool {
	names := map[string]bool{}
	for _, line := range strings.Split(string(ar.Comment), "\n") {
		args, _ := parseLine(strings.TrimSpace(line))
		for _, a := range args {
			names[a] = true
		}
	}
	return names
}
